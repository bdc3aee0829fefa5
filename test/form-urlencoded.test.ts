/**
 * The form parser of the token endpoint (src/http/form-urlencoded.ts) against the one it replaces: for any text,
 * the same names and values, in the same order, as `URLSearchParams` (the WHATWG URL Standard's parser), including
 * broken escapes, bytes that are not UTF-8, lone surrogates and the leading `?` it drops.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseForm } from '../src/http/form-urlencoded.js';

/** What URLSearchParams makes of `text`, as a ParamMap's entries. */
function reference(text: string): [string, string[]][] {
  const map = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(text)) map.set(name, [...(map.get(name) ?? []), value]);
  return [...map];
}

/** Pieces a form is made of, the troublesome ones often. */
const piece = fc.oneof(
  fc.constantFrom('&', '=', '+', '%', '%2', '%zz', '%41', '%2B', '%26', '%3D', '%C3%A9', '%E2%82%AC', '%C3', '%FF', '%ED%A0%80'),
  fc.constantFrom('?', '#', ' ', 'é', '€', '😀', '\uD800', '\uDFFF', 'grant_type', 'client_credentials', 'scope'),
  fc.string({ maxLength: 6 }),
);

describe('parseForm', () => {
  it('parses every text as URLSearchParams does', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
        const text = pieces.join('');
        expect([...parseForm(text)]).toEqual(reference(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('decodes what the token endpoint receives', () => {
    const form =
      'grant_type=authorization_code&code=a.b-c_d&redirect_uri=https%3A%2F%2Fapp.example%2Fcb%3Fx%3D1&scope=openid+profile&scope=';
    expect(Object.fromEntries(parseForm(form))).toEqual({
      grant_type: ['authorization_code'],
      code: ['a.b-c_d'],
      redirect_uri: ['https://app.example/cb?x=1'],
      scope: ['openid profile', ''],
    });
  });

  it('keeps broken escapes and refuses nothing', () => {
    expect(parseForm('a=%zz&b=%C3&c=%&&d&=e&?f=1')).toEqual(
      new Map([
        ['a', ['%zz']],
        ['b', ['\uFFFD']],
        ['c', ['%']],
        ['d', ['']],
        ['', ['e']],
        ['?f', ['1']],
      ]),
    );
    expect([...parseForm('?grant_type=x')]).toEqual([['grant_type', ['x']]]);
    expect([...parseForm('a=\uD800')]).toEqual([['a', ['\uFFFD']]]);
  });
});
