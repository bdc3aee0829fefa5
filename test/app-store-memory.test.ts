import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { runAppStoreContract } from './helpers/app-store-contract.js';
import { movableClock } from './helpers/clock.js';

// The MemoryAppStore ends a secret's overlap by this process's clock: the contract moves it rather than sleep.
runAppStoreContract('MemoryAppStore', async () => {
  const clock = movableClock();
  return { store: new MemoryAppStore(), cleanup: async () => clock.restore(), wait: (ms) => clock.advance(ms) };
});
