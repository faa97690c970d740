import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, rmSync, statSync } from 'node:fs';
import { mkdtemp, open, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface StoredBlob {
  id: string;
  size: number;
  sha256: string;
}

/**
 * Attachment and content bytes, one file per blob. Uploads stream to disk (never buffered whole), are fsynced,
 * and only then handed to a handler, so a committed row never points at bytes that a crash lost.
 */
export class BlobStore {
  private constructor(
    readonly dir: string,
    private readonly temporary: boolean,
  ) {}

  /** A store in `dir` (kept), or in a fresh temporary folder removed by `close()`. */
  static async open(dir?: string): Promise<BlobStore> {
    if (dir) {
      mkdirSync(dir, { recursive: true });
      return new BlobStore(dir, false);
    }
    return new BlobStore(await mkdtemp(join(tmpdir(), 'casebridge-emulator-blobs-')), true);
  }

  /** Streams `source` to a new blob; rejects (and leaves nothing behind) when the stream fails or exceeds `limit`. */
  async put(source: Readable, limit = Number.POSITIVE_INFINITY): Promise<StoredBlob> {
    const id = randomUUID();
    const path = join(this.dir, id);
    const hash = createHash('sha256');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (size > limit) {
          cb(Object.assign(new Error(`file exceeds the size limit of ${limit} bytes`), { code: 'EBLOBLIMIT' }));
          return;
        }
        hash.update(chunk);
        cb(null, chunk);
      },
    });
    try {
      await pipeline(source, meter, createWriteStream(path));
      const fh = await open(path, 'r');
      await fh.sync();
      await fh.close();
    } catch (err) {
      await unlink(path).catch(() => {});
      throw err;
    }
    return { id, size, sha256: hash.digest('hex') };
  }

  read(id: string): Readable {
    return createReadStream(join(this.dir, id));
  }

  size(id: string): number {
    return statSync(join(this.dir, id)).size;
  }

  async remove(id: string): Promise<void> {
    await unlink(join(this.dir, id)).catch(() => {});
  }

  close(): void {
    if (this.temporary) rmSync(this.dir, { recursive: true, force: true });
  }
}
