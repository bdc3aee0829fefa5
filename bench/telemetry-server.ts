/**
 * One server of the telemetry bench (bench/telemetry.ts): `node --import tsx bench/telemetry-server.ts <variant> <port>
 * <source root>`. The core on bare node:http, as the sentinel-node row of the main bench, loaded from the build of
 * `<source root>` (this repository, or the extracted source from before telemetry existed; bench/library-build.ts). The SDK setup of each variant is in
 * bench/telemetry-sdk.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HOST } from './fixtures.js';
import { libraryModuleURL } from './library-build.js';
import type { SentinelRequestLike, SentinelResponseLike } from './targets/sentinel-common.js';
import { listen } from './targets/util.js';
import { benchSentinel, registerBenchSDK, TELEMETRY_VARIANTS, type TelemetryVariant } from './telemetry-sdk.js';

interface NodeHelpers {
  fromNodeRequest(request: IncomingMessage, input: { url: string; parsedBody: () => unknown }): SentinelRequestLike;
  writeNodeResponse(response: ServerResponse, result: SentinelResponseLike): void;
}

const [variant, portArg, root] = process.argv.slice(2);
const port = Number(portArg);
setTimeout(() => process.exit(3), 600_000).unref();
process.on('disconnect', () => process.exit(0));

async function main(): Promise<void> {
  if (!TELEMETRY_VARIANTS.includes(variant as TelemetryVariant) || !Number.isInteger(port) || root === undefined) {
    throw new Error(`usage: telemetry-server.ts ${TELEMETRY_VARIANTS.join('|')} <port> <source root>`);
  }
  registerBenchSDK(variant as TelemetryVariant);
  const sentinel = await benchSentinel(root, port);
  const helpers = (await import(libraryModuleURL('adapters/node/index.js', root))) as NodeHelpers;
  await listen(
    (req, res) => {
      sentinel
        .handle(helpers.fromNodeRequest(req, { url: req.url ?? '/', parsedBody: () => undefined }))
        .then((response) => {
          if (response === null) {
            res.writeHead(404).end();
            return;
          }
          helpers.writeNodeResponse(res, response);
        })
        .catch(() => res.writeHead(500).end());
    },
    port,
    HOST,
  );
  // CPU time of the whole process (every thread) over the measured window, as the main bench measures it.
  let cpuStart: NodeJS.CpuUsage | undefined;
  process.on('message', (message: { type: string }) => {
    if (message.type === 'cpu-start') {
      cpuStart = process.cpuUsage();
      process.send?.({ type: 'cpu-started' });
    } else if (message.type === 'cpu-stop') {
      const delta = process.cpuUsage(cpuStart);
      process.send?.({ type: 'cpu', micros: delta.user + delta.system });
    }
  });
  process.send?.({ type: 'ready' });
}

main().catch((error: unknown) => {
  process.send?.({ type: 'failed', error: error instanceof Error ? error.message : String(error) });
  setTimeout(() => process.exit(2), 100);
});
