# frozen_string_literal: true

# OAuth 2.0 / OpenID Connect clients written the way a Ruby application uses Debian's gems:
#
# - openid_connect (discovery, the authorization URL, ID token decoding and verification) over rack-oauth2 (code
#   exchange, refresh, client credentials, and the private_key_jwt assertion it signs itself with
#   `access_token!(:jwt_bearer)`, aud = the URL it posts to);
# - the oauth2 gem (auth code, refresh!, client credentials; `auth_scheme: :private_key_jwt` with an assertion the
#   application signs with ruby-jwt, which also checks the ID token against the published key set). Its steps are
#   reported with the prefix "oauth2.".
#
# The driver (test/interop-clients.test.ts) passes the settings in INTEROP_* variables, signs the user in when
# the program prints "AUTHORIZE <url>" and answers with the callback URL on stdin. Each step prints
# "RESULT <step> <json>"; any failure raises, and the exit status is non-zero.
require 'base64'
require 'digest'
require 'json'
require 'jwt'
require 'net/http'
require 'oauth2'
require 'openid_connect'
require 'securerandom'

$stdout.sync = true
# The test server speaks plain http on 127.0.0.1; discovery builds https URLs unless told otherwise.
SWD.url_builder = URI::HTTP

def env(name)
  ENV.fetch(name) { raise "#{name} is not set" }
end

def callback_from_driver(url)
  puts "AUTHORIZE #{url}"
  URI.parse($stdin.gets.to_s.strip)
end

def result(step, token, extra = {})
  # Standard clients compute the expiry as a time plus expires_in: a string there is a TypeError.
  expires_at = Time.now + token.expires_in unless step.end_with?('_v2')
  puts "RESULT #{step} #{JSON.generate({
    access_token: token.access_token,
    refresh_token: token.refresh_token,
    token_type: token.token_type,
    expires_in: expires_at.nil? ? token.expires_in : (expires_at - Time.now).round,
  }.merge(extra))}"
end

issuer = env('INTEROP_ISSUER')
v2_url = env('INTEROP_V2_TOKEN_URL')
client_id = env('INTEROP_CLIENT_ID')
client_secret = env('INTEROP_CLIENT_SECRET')
config = OpenIDConnect::Discovery::Provider::Config.discover!(issuer)

new_client = lambda do |token_endpoint, **attributes|
  OpenIDConnect::Client.new(
    identifier: client_id,
    secret: client_secret,
    redirect_uri: env('INTEROP_REDIRECT_URI'),
    authorization_endpoint: config.authorization_endpoint,
    token_endpoint: token_endpoint,
    **attributes
  )
end

# Authorization code flow with PKCE.
client = new_client.call(config.token_endpoint)
state = SecureRandom.hex(16)
nonce = SecureRandom.hex(16)
verifier = SecureRandom.urlsafe_base64(48)
challenge = Base64.urlsafe_encode64(Digest::SHA256.digest(verifier), padding: false)
callback = callback_from_driver(client.authorization_uri(scope: [:openid], state: state, nonce: nonce,
                                                         code_challenge: challenge, code_challenge_method: :S256))
query = URI.decode_www_form(callback.query.to_s).to_h
raise "state mismatch: #{query}" unless query['state'] == state

client.authorization_code = query.fetch('code')
token = client.access_token!(code_verifier: verifier)
id_token = OpenIDConnect::ResponseObject::IdToken.decode(token.id_token, config.jwks)
id_token.verify!(issuer: config.issuer, client_id: client_id, nonce: nonce)
result('code', token, id_token_sub: id_token.sub)

# Refresh.
client.refresh_token = token.refresh_token
result('refresh', client.access_token!)

# Client credentials with the secret (HTTP Basic, rack-oauth2's default) at both endpoints.
result('client_credentials', new_client.call(config.token_endpoint).access_token!)
result('client_credentials_v2', new_client.call(v2_url).access_token!)

# private_key_jwt at both endpoints: rack-oauth2 signs the assertion, with aud = the URL it posts to.
key = OpenSSL::PKey.read(File.read(env('INTEROP_KEY_FILE')))
[['private_key_jwt', config.token_endpoint], ['private_key_jwt_v2', v2_url]].each do |step, endpoint|
  keyed = OpenIDConnect::Client.new(identifier: env('INTEROP_KEYED_CLIENT_ID'), private_key: key, token_endpoint: endpoint)
  result(step, keyed.access_token!(:jwt_bearer))
end

# The oauth2 gem: the same steps with its own calls.
oauth2 = OAuth2::Client.new(client_id, client_secret, site: issuer, authorize_url: config.authorization_endpoint,
                                                      token_url: config.token_endpoint, auth_scheme: :basic_auth)
state = SecureRandom.hex(16)
nonce = SecureRandom.hex(16)
callback = callback_from_driver(oauth2.auth_code.authorize_url(redirect_uri: env('INTEROP_REDIRECT_URI'),
                                                               scope: 'openid', state: state, nonce: nonce))
query = URI.decode_www_form(callback.query.to_s).to_h
raise "state mismatch: #{query}" unless query['state'] == state

token = oauth2.auth_code.get_token(query.fetch('code'), redirect_uri: env('INTEROP_REDIRECT_URI'))
jwks = JSON.parse(Net::HTTP.get(URI(config.jwks_uri)))
claims, = JWT.decode(token.params.fetch('id_token'), nil, true,
                     algorithms: ['RS256'], jwks: jwks, iss: config.issuer, verify_iss: true, aud: client_id, verify_aud: true)
raise 'nonce mismatch' unless claims['nonce'] == nonce

gem_result = lambda do |step, access_token, extra = {}|
  puts "RESULT oauth2.#{step} #{JSON.generate({
    access_token: access_token.token,
    refresh_token: access_token.refresh_token,
    token_type: access_token.params['token_type'],
    # The gem converts expires_in with to_i itself; report what the server sent.
    expires_in: access_token.params.fetch('expires_in', access_token.expires_in),
  }.merge(extra))}"
end
gem_result.call('code', token, id_token_sub: claims['sub'])
gem_result.call('refresh', token.refresh!)
[['client_credentials', config.token_endpoint], ['client_credentials_v2', v2_url]].each do |step, endpoint|
  credentials = OAuth2::Client.new(client_id, client_secret, site: issuer, token_url: endpoint, auth_scheme: :basic_auth)
  gem_result.call(step, credentials.client_credentials.get_token)
end
keyed_id = env('INTEROP_KEYED_CLIENT_ID')
[['private_key_jwt', config.token_endpoint], ['private_key_jwt_v2', v2_url]].each do |step, endpoint|
  now = Time.now.to_i
  assertion = JWT.encode({ iss: keyed_id, sub: keyed_id, aud: endpoint, jti: SecureRandom.uuid, iat: now, exp: now + 300 },
                         key, 'RS256', kid: env('INTEROP_KEY_ID'))
  keyed = OAuth2::Client.new(keyed_id, nil, site: issuer, token_url: endpoint, auth_scheme: :private_key_jwt)
  gem_result.call(step, keyed.client_credentials.get_token(
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion
  ))
end
puts 'DONE'
