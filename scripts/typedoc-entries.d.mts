/** Types of scripts/typedoc-entries.mjs: the typedoc options it contributes. */
declare const options: { entryPoints: string[] };
export default options;
