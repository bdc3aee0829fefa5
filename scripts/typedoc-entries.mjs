/**
 * The API reference's entry points, derived from package.json (scripts/entry-points.mjs). typedoc.json cannot
 * compute, so it names this file in `extends`. Paths are absolute: typedoc resolves a relative one against the
 * folder of the file that set it, which is `scripts/`.
 */
import { join } from 'node:path';
import { REPO_ROOT, readEntryPoints } from './entry-points.mjs';

export default { entryPoints: readEntryPoints().map(({ source }) => join(REPO_ROOT, source)) };
