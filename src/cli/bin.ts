/**
 * The process that runs the `sentinel-idp` command (the package's `bin`): {@link main} over the real streams, its
 * exit code, and the end of the run once the output is written. Kept apart from `main.ts`, which tests import.
 */
import { main } from './main.js';
import { processIO } from './process-io.js';

const run = processIO(process);
main(process.argv.slice(2), run.io)
  .then(
    (code) => {
      process.exitCode = code;
    },
    () => {
      process.exitCode = 1;
    },
  )
  .then(() => run.flushed())
  .then(() => {
    // Every command closes what it opened before it returns. What still holds the event loop is not the CLI's: the
    // Redis client or pool a module made when `config check` imported it would keep the run alive for ever, and a
    // CI job waiting on it. The output written, the run ends (the 'exit' handler below still sees a lost output).
    process.exit();
  });
// At exit, not when the command returns: the closed pipe is reported by an event that may come after that.
process.on('exit', () => {
  if (run.outputLost()) process.exitCode = 1;
});
