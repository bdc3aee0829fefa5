/** What a target module exports. The runner never imports target modules: bench/server.ts does, in a child. */
export interface TargetMeta {
  label: string;
  kind: 'ceiling' | 'baseline' | 'peer' | 'sentinel';
}

export interface RunningTarget {
  close(): Promise<void>;
}

export interface TargetModule {
  meta: TargetMeta;
  start(port: number): Promise<RunningTarget>;
}
