// A real OAuth 2.1 authorization server for Offload's sign-in tests: node-oidc-provider (npm
// `oidc-provider`) in a development configuration.
//
// Usage: node oauth_provider.mjs PORT RESOURCE   (issuer http://127.0.0.1:PORT; prints "listening")
//
// - Dynamic client registration (open), PKCE, resource indicators (RFC 8707) for RESOURCE, JWT
//   access tokens for it (verified by the protected MCP server through /jwks), refresh tokens
//   rotated on every use, the RFC 9207 `iss` response parameter (the provider's default).
// - Its own login form (devInteractions): any login name and password sign in; tests drive the
//   form over HTTP the way a browser would. Consent is approved automatically.
// - OAUTH_ACCESS_TTL (seconds, default 3600) sets the access tokens' lifetime, for expiry and
//   refresh tests.
// - POST /admin/revoke revokes every grant (its refresh tokens stop working), as a user
//   removing the app's access at the provider would. GET /admin/counts says how many tokens were
//   issued by grant type, so tests can see that a refresh happened.
// - OAUTH_RESOURCE_SCOPES (default "mcp:tools") are the scopes tokens for RESOURCE may carry;
//   OAUTH_EXTRA_SCOPES are scopes the provider knows (clients may ask for them) but never grants.
// - OAUTH_PREREGISTERED="id:secret" adds a confidential client registered out of band
//   (client_secret_basic, redirect URIs on 127.0.0.1 with any port, as RFC 8252 allows).
import http from 'node:http';

import Provider from 'oidc-provider';

const [port, resource] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const accessTtl = Number(process.env.OAUTH_ACCESS_TTL || 3600);
const resourceScopes = (process.env.OAUTH_RESOURCE_SCOPES || 'mcp:tools').split(' ');
const extraScopes = (process.env.OAUTH_EXTRA_SCOPES || '').split(' ').filter(Boolean);
const scopes = ['openid', 'offline_access', ...resourceScopes, ...extraScopes];

const clients = [];
if (process.env.OAUTH_PREREGISTERED) {
  const [client_id, client_secret] = process.env.OAUTH_PREREGISTERED.split(':');
  clients.push({
    client_id,
    client_secret,
    application_type: 'native',
    redirect_uris: ['http://127.0.0.1/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_method: 'client_secret_basic',
  });
}

const provider = new Provider(issuer, {
  clients,
  scopes,
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => {
        if (indicator !== resource) {
          throw new Provider.errors.InvalidTarget(`unknown resource ${indicator}`);
        }
        return { scope: resourceScopes.join(' '), audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: accessTtl };
      },
    },
  },
  // Consent is approved automatically: the grant holds whatever the client asked for. (The
  // provider still shows native clients a consent page once, which the fake browser confirms.)
  async loadExistingGrant(ctx) {
    const id = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (id) {
      const existing = await ctx.oidc.provider.Grant.find(id);
      if (existing) {
        existing.addOIDCScope(scopes.join(' '));
        existing.addResourceScope(resource, resourceScopes.join(' '));
        await existing.save();
        return existing;
      }
    }
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope(scopes.join(' '));
    grant.addResourceScope(resource, resourceScopes.join(' '));
    await grant.save();
    return grant;
  },
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: true,
  pkce: { required: () => true },
  ttl: { AccessToken: accessTtl, RefreshToken: 24 * 3600, Grant: 24 * 3600, Session: 24 * 3600 },
});

const counts = { authorization_code: 0, refresh_token: 0 };
const grants = new Set();
provider.on('grant.success', (ctx) => {
  const kind = ctx.oidc.params.grant_type;
  counts[kind] = (counts[kind] || 0) + 1;
});
provider.on('refresh_token.saved', (token) => grants.add(token.grantId));
provider.on('server_error', (_ctx, err) => console.error('server_error', err));

// Native clients' loopback redirect URIs match on any port (RFC 8252 §7.3).
const { redirectUriAllowed } = provider.Client.prototype;
provider.Client.prototype.redirectUriAllowed = function allowed(value) {
  try {
    const url = new URL(value);
    if (url.hostname === '127.0.0.1' && url.protocol === 'http:') {
      url.port = '';
      if (redirectUriAllowed.call(this, url.href)) return true;
    }
  } catch {
    // not a URL: the provider's own check says no
  }
  return redirectUriAllowed.call(this, value);
};

const callback = provider.callback();
const server = http.createServer(async (req, res) => {
  if (req.url === '/admin/revoke' && req.method === 'POST') {
    for (const id of grants) {
      await provider.RefreshToken.adapter.revokeByGrantId(id);
      await provider.Grant.adapter.destroy(id);
    }
    grants.clear();
    res.writeHead(204).end();
    return;
  }
  if (req.url === '/admin/counts') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
    return;
  }
  callback(req, res);
});
server.listen(Number(port), '127.0.0.1', () => console.log('listening'));
