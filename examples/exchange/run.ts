/**
 * `npm run example:exchange`: authenticated consumers and a bot acting for one, end to end on loopback.
 *
 * 1. The brand's identity provider (brand-idp.ts) signs a JWT for its signed-in consumer with jose.
 * 2. The messaging app exchanges it for the consumer-bound token (RFC 7523 JWT bearer), and posts as the consumer.
 * 3. A bot exchanges the consumer's token for a narrower one naming it in `act` (RFC 8693), and posts for them: the
 *    platform's route, behind `requireAccessToken`, sees who acts for whom.
 * 4. A replayed brand JWT and a bot asking for more than the consumer has are refused.
 *
 * The platform trusts the brand's key set at a loopback URL, which only `clientJwks.allowPrivateAddresses`
 * (development only) permits; a real brand publishes it over https.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import { createSentinel, generateClientSecret, generatePrivateJWK } from 'sentinel-idp';
import { requireAccessToken, toExpress } from 'sentinel-idp/express';
import { startBrandIdentityProvider } from './brand-idp.js';
import { actFor, type ClientCredentials, proveConsumer } from './bot.js';

const ACCOUNT = '123456';
const CONSUMER = randomUUID(); // a participant id, as the brand knows its consumer
const app: ClientCredentials = { clientId: randomUUID(), clientSecret: generateClientSecret() };
const bot: ClientCredentials = { clientId: randomUUID(), clientSecret: generateClientSecret() };

let failed = false;
function step(label: string, ok: boolean, detail: string): void {
  if (!ok) failed = true;
  console.log(`${label}: ${ok ? 'OK' : 'FAILED'} ${detail}`);
}

const brand = await startBrandIdentityProvider();
const server = createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const sentinel = createSentinel({
  issuer: origin,
  keys: [generatePrivateJWK('ES256')],
  apps: [
    {
      accountId: ACCOUNT,
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      name: 'Messaging app',
      redirectUris: [],
      grantTypes: ['urn:ietf:params:oauth:grant-type:jwt-bearer'],
      scope: 'messages:read messages:write',
    },
    {
      accountId: ACCOUNT,
      clientId: bot.clientId,
      clientSecret: bot.clientSecret,
      name: 'Order-status bot',
      redirectUris: [],
      grantTypes: ['urn:ietf:params:oauth:grant-type:token-exchange'],
    },
  ],
  trustedIssuers: [{ accountId: ACCOUNT, issuer: brand.issuer, jwksUri: brand.jwksUri }],
  clientJwks: { allowPrivateAddresses: true }, // development only: the brand's keys are on loopback here
  // Only the bot may act for someone, only for a consumer (not a user of the platform), and only directly (not for
  // another bot): `subjectKind` comes from the subject token's own claims.
  authorizeDelegation: ({ clientId, subjectKind, actors }) =>
    clientId === bot.clientId && subjectKind === 'consumer' && actors.length === 0,
  onError: (error) => console.error('sentinel-idp error:', error),
});

const platform = express();
platform.use(toExpress(sentinel));
// The platform's own API: the token must be for this account and this consumer; `act` says who acts for them.
platform.post(
  '/api/account/:accountId/consumer/:consumerId/messages',
  requireAccessToken(sentinel),
  (req: Request<{ consumerId: string }>, res: Response) => {
    const claims = req.sentinel;
    res.status(201).json({ consumer: claims?.sub, sentBy: claims?.act?.sub ?? claims?.sub, scope: claims?.scope });
  },
);
server.on('request', platform);

const accountIssuer = `${origin}/sentinel/api/account/${ACCOUNT}`;
const metadata = (await (await fetch(`${origin}/.well-known/oauth-authorization-server/sentinel/api/account/${ACCOUNT}`)).json()) as {
  token_endpoint: string;
};
const tokenEndpoint = metadata.token_endpoint;
const messages = `${origin}/api/account/${ACCOUNT}/consumer/${CONSUMER}/messages`;
const post = async (token: string) => {
  const response = await fetch(messages, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

try {
  const brandJWT = await brand.signConsumerJWT(CONSUMER, accountIssuer);
  step('brand', brandJWT.split('.').length === 3, `signed a JWT for consumer ${CONSUMER}`);

  const proven = await proveConsumer(tokenEndpoint, app, brandJWT);
  const consumerToken = String(proven.body.access_token);
  step(
    'app',
    proven.status === 200,
    `JWT bearer: ${proven.status}, ${String(proven.body.token_type)} token, expires_in ${String(proven.body.expires_in)}`,
  );
  const asConsumer = await post(consumerToken);
  step(
    'app',
    asConsumer.status === 201 && asConsumer.body.sentBy === CONSUMER,
    `posted as the consumer: ${JSON.stringify(asConsumer.body)}`,
  );

  const delegated = await actFor(tokenEndpoint, bot, consumerToken, 'messages:write');
  step(
    'bot',
    delegated.status === 200,
    `token exchange: ${delegated.status}, issued_token_type ${String(delegated.body.issued_token_type)}`,
  );
  const forConsumer = await post(String(delegated.body.access_token));
  step(
    'bot',
    forConsumer.status === 201 && forConsumer.body.sentBy === bot.clientId && forConsumer.body.consumer === CONSUMER,
    `posted for the consumer: ${JSON.stringify(forConsumer.body)}`,
  );

  const replay = await proveConsumer(tokenEndpoint, app, brandJWT);
  step(
    'replay',
    replay.status === 400 && replay.body.error === 'invalid_grant',
    `${replay.status} ${String(replay.body.error)}: ${String(replay.body.error_description)}`,
  );
  const wider = await actFor(tokenEndpoint, bot, String(delegated.body.access_token), 'messages:read messages:write admin');
  step(
    'wider',
    wider.status === 400 && wider.body.error === 'invalid_scope',
    `${wider.status} ${String(wider.body.error)}: ${String(wider.body.error_description)}`,
  );
} finally {
  server.close();
  await brand.close();
}
console.log(failed ? 'exchange example: a step failed' : 'exchange example: all steps completed');
process.exitCode = failed ? 1 : 0;
