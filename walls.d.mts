/** Types of walls.mjs (the one table of the walls), for test/walls.test.ts. */
export declare const CORE_ROOMS: string[][];
export declare const CORE_GROUND: string[];
export declare function coreDeps(): Record<string, string[]>;
export declare function coreOverrides(): unknown[];
export declare function emulatorOverrides(): unknown[];
export declare const BIOME_FILES: Record<string, () => unknown[]>;
export declare function biomeFile(overrides: () => unknown[]): string;
export declare function drift(): string[];
