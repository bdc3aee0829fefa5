import type { Page } from 'playwright-core';

/**
 * Gives `page` a virtual platform authenticator (Chrome DevTools Protocol) with user verification that answers every
 * WebAuthn prompt by itself: a passkey can be made and used without a person at the browser.
 * @example await addVirtualAuthenticator(page);
 */
export async function addVirtualAuthenticator(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
}
