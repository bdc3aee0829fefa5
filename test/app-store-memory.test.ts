import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { runAppStoreContract } from './helpers/app-store-contract.js';

runAppStoreContract('MemoryAppStore', async () => ({ store: new MemoryAppStore(), cleanup: async () => {} }));
