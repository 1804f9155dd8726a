// Imported first by every web test. Node 19+ has WebCrypto as globalThis.crypto, as browsers do; Node 18 (Debian
// 12's nodejs package) has it only as node:crypto's webcrypto, so it is put where the modules look for it.
import { webcrypto } from 'node:crypto';

if (!globalThis.crypto) globalThis.crypto = webcrypto;
