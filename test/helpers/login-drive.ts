/**
 * Drives the built-in login page over HTTP the way a browser does, with a supertest agent as the cookie jar:
 * authorize → login page → form post → 303 back to the app.
 */
import type request from 'supertest';
import { expect } from 'vitest';
import { PASSWORD, USERNAME } from './fixtures.js';

/** A supertest agent: a browser with a cookie jar. */
export type Agent = ReturnType<typeof request.agent>;

const FORM = 'application/x-www-form-urlencoded';

/** The hidden CSRF token of a login page. */
export function csrfOf(html: string): string {
  const token = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
  expect(token, 'login page has a csrf_token field').toBeTruthy();
  return token as string;
}

/** GET an authorize path without a session: the login page path (path-absolute, interaction id only). */
export async function startLogin(agent: Agent, authorizePath: string): Promise<string> {
  const response = await agent.get(authorizePath);
  expect(response.status).toBe(302);
  const location = response.headers.location as string;
  expect(location).toMatch(/^\/[^?]*\/login\?interaction=[A-Za-z0-9_-]{43}$/);
  return location;
}

/** Opens the login page and returns it with its CSRF token. */
export async function openLogin(agent: Agent, loginPath: string): Promise<{ page: request.Response; csrf: string }> {
  const page = await agent.get(loginPath);
  expect(page.status).toBe(200);
  return { page, csrf: csrfOf(page.text) };
}

/** Posts the login form. */
export function postLogin(agent: Agent, loginPath: string, form: Record<string, string>): request.Test {
  return agent.post(loginPath).set('content-type', FORM).send(new URLSearchParams(form).toString());
}

/** The whole no-session flow for the fixture user, up to the 303 back to the app. */
export async function signIn(agent: Agent, authorizePath: string): Promise<request.Response> {
  const loginPath = await startLogin(agent, authorizePath);
  const { csrf } = await openLogin(agent, loginPath);
  const response = await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  expect(response.status).toBe(303);
  return response;
}

/** Every Set-Cookie line of a response. */
export function setCookies(response: request.Response): string[] {
  const value = response.headers['set-cookie'] as string[] | string | undefined;
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** The session cookie a response sets (the assertion fails when there is none). */
export function sessionCookieOf(response: request.Response): string {
  const cookie = setCookies(response).find((line) => line.startsWith('sentinel_session='));
  expect(cookie, 'a session cookie is set').toBeTruthy();
  return cookie as string;
}

/** The query of a Location header, parsed, with the part before it. */
export function parseLocation(response: request.Response): { base: string; params: URLSearchParams } {
  const location = response.headers.location as string | undefined;
  expect(location, `expected a Location header (status ${response.status})`).toBeTypeOf('string');
  const mark = (location as string).indexOf('?');
  return {
    base: mark === -1 ? (location as string) : (location as string).slice(0, mark),
    params: new URLSearchParams(mark === -1 ? '' : (location as string).slice(mark + 1)),
  };
}
