import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { ConfigError } from './errors.js';
import { redactedMessage, safeUrl } from './secrets.js';
import type { TransportOptions } from './transport-types.js';

/** What both connection paths verify the server with. */
export interface TlsSettings {
  ca?: string[];
  rejectUnauthorized: boolean;
}

/** The CA bundle (caFile added to Node's roots) and verification setting; warns when verification is off. */
export function tlsSettings(
  o: Pick<TransportOptions, 'baseUrl' | 'caFile' | 'rejectUnauthorized' | 'logger'>,
): TlsSettings {
  let ca: string[] | undefined;
  if (o.caFile) {
    let pem: string;
    try {
      pem = readFileSync(o.caFile, 'utf8');
    } catch (err) {
      throw new ConfigError(`caFile ${o.caFile} cannot be read: ${redactedMessage(err)}`);
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
      throw new ConfigError(`caFile ${o.caFile} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    }
    // Giving `ca` replaces Node's roots (and NODE_EXTRA_CA_CERTS): add them back so public hosts still verify.
    const extra = process.env.NODE_EXTRA_CA_CERTS;
    let extraPem: string[] = [];
    if (extra) {
      try {
        extraPem = [readFileSync(extra, 'utf8')];
      } catch {
        extraPem = [];
      }
    }
    ca = [...rootCertificates, ...extraPem, pem];
  }
  if (o.rejectUnauthorized === false) {
    // Only on explicit request, and never silently: anyone on the path could read the credentials.
    const message = `casebridge: TLS certificate verification is OFF for ${safeUrl(o.baseUrl)} (rejectUnauthorized: false); give the CA with caFile instead`;
    process.emitWarning(message, { code: 'CASEBRIDGE_TLS_UNVERIFIED' });
    o.logger?.('warn', message);
  }
  return { ...(ca ? { ca } : {}), rejectUnauthorized: o.rejectUnauthorized !== false };
}
