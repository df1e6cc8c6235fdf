// Test support (a testing/ folder: production may not import it, .dependency-cruiser.cjs). A software authenticator for tests: an ES256 key pair that answers registration and
// authentication options the way a platform authenticator does (attestation `none`, user
// present and verified), so the library's own verification runs on real signatures. Options
// (origin, RP ID, counter) can be bent to make the answers the ceremonies must refuse.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';

const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

const b64 = (bytes: Uint8Array): string => isoBase64URL.fromBuffer(new Uint8Array(bytes));
const sha256 = (data: Uint8Array | string): Buffer => createHash('sha256').update(data).digest();

export class SoftAuthenticator {
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  readonly credentialId = randomBytes(16);
  counter = 0;
  /** The user.id of the registration options (base64url), answered as the assertions' userHandle. */
  userHandle: string | null = null;

  constructor(
    readonly origin: string,
    readonly rpId: string,
  ) {
    ({ privateKey: this.privateKey, publicKey: this.publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' }));
  }

  get id(): string {
    return b64(this.credentialId);
  }

  /** A registration; `bend.userVerified: false` answers with user presence only. */
  register(options: PublicKeyCredentialCreationOptionsJSON, bend: { userVerified?: boolean } = {}): RegistrationResponseJSON {
    this.userHandle = options.user.id;
    const jwk = this.publicKey.export({ format: 'jwk' });
    const cose = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, isoBase64URL.toBuffer(jwk.x ?? '')],
      [-3, isoBase64URL.toBuffer(jwk.y ?? '')],
    ]);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, this.credentialId, Buffer.from(isoCBOR.encode(cose))]);
    const authData = this.authData(this.rpId, (bend.userVerified === false ? UP : UP | UV) | AT, attested);
    const attestation: [string, string | Map<string, string> | Uint8Array][] = [
      ['fmt', 'none'],
      ['attStmt', new Map<string, string>()],
      ['authData', new Uint8Array(authData)],
    ];
    const attestationObject = isoCBOR.encode(new Map(attestation));
    const clientData = JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: this.origin, crossOrigin: false });
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: b64(Buffer.from(clientData)), attestationObject: b64(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
    };
  }

  /**
   * An assertion; `bend` makes it wrong in one way (another origin, RP ID, counter, userHandle
   * (null: none), user not verified, or a signature by another key).
   */
  assert(
    options: PublicKeyCredentialRequestOptionsJSON,
    bend: { origin?: string; rpId?: string; counter?: number; userHandle?: string | null; userVerified?: boolean; signer?: KeyObject } = {},
  ): AuthenticationResponseJSON {
    this.counter = bend.counter ?? this.counter + 1;
    const authData = this.authData(bend.rpId ?? this.rpId, bend.userVerified === false ? UP : UP | UV);
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: bend.origin ?? this.origin, crossOrigin: false }));
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), bend.signer ?? this.privateKey);
    const userHandle = bend.userHandle === undefined ? this.userHandle : bend.userHandle;
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: b64(clientData), authenticatorData: b64(authData), signature: b64(signature), ...(userHandle === null ? {} : { userHandle }) },
      clientExtensionResults: {},
    };
  }

  private authData(rpId: string, flags: number, attested: Buffer = Buffer.alloc(0)): Buffer {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), counter, attested]);
  }
}
