/** What a target module exports. The runner never imports target modules: bench/server.ts does, in a child. */
export interface RunningTarget {
  close(): Promise<void>;
}

export interface TargetModule {
  /** `variant` is the part after `:` in the registry's module name (e.g. `sync`, `redis`, `nocache`). */
  start(port: number, variant?: string): Promise<RunningTarget>;
}
