import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { runAppStoreContract } from './app-store-contract.js';

runAppStoreContract('MemoryAppStore', async () => ({ store: new MemoryAppStore(), cleanup: async () => {} }));
