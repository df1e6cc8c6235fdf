// Run by vectors.test.ts with Bun: the Web Crypto verifier of the `web` entry against the
// signature vectors, under another JavaScript runtime. Prints one JSON line.
import { verifyWebhookAsync } from './web.ts';
import { failedVectors, type SignatureVectorFile } from './vectors.ts';

declare const Bun: { version: string; file(path: string): { json(): Promise<unknown> } };

const file = (await Bun.file(process.argv[2] ?? '').json()) as SignatureVectorFile;
const failures = [...(await failedVectors(file, verifyWebhookAsync, 'object')), ...(await failedVectors(file, verifyWebhookAsync, 'Headers'))];
console.log(JSON.stringify({ runtime: `bun ${Bun.version}`, vectors: file.vectors.length, failures }));
