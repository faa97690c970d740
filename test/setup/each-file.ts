import { forgetSecrets } from '../../packages/core/src/client/secrets.js';

/**
 * Runs before each test file. Files share a worker's modules (`isolate: false` in vitest.config.ts: each file
 * importing the core and the emulator afresh cost a minute of CPU in all), so what the core keeps per process starts
 * empty for each file: the secrets another file registered.
 */
forgetSecrets();
