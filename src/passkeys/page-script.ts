/**
 * The pages' only scripts: the passkey button of the login page and of the "add a passkey" page. Plain ES2017
 * with no dependency (the browser's WebAuthn API and base64url conversion are all they need), run under the CSP
 * nonce of their page. Each one only reveals its button when the browser has WebAuthn, fetches a challenge from
 * the service, and posts the browser's answer in an ordinary form, so the 303 that follows is a normal navigation.
 * A cancelled prompt leaves the page as it was. When the service refuses the challenge (a sign-in throttled or out
 * of date, one grown older than `account.maxSignInAge` while the page was open), a page that carries its own words
 * for it (`data-failed` on the form) shows them in an alert inserted before the form (`#passkey-error`: inserted,
 * not revealed, so that screen readers announce it); the button works again either way.
 */

const HELPERS = `function b64(s){s=s.replace(/-/g,'+').replace(/_/g,'/');while(s.length%4)s+='=';var b=atob(s),u=new Uint8Array(b.length);for(var i=0;i<b.length;i++)u[i]=b.charCodeAt(i);return u.buffer}
function enc(buf){var u=new Uint8Array(buf),s='';for(var i=0;i<u.length;i++)s+=String.fromCharCode(u[i]);return btoa(s).replace(/\\+/g,'-').replace(/\\//g,'_').replace(/=+$/,'')}
function ids(list){return (list||[]).map(function(c){return {type:c.type,id:b64(c.id),transports:c.transports}})}
function challenge(form){var body=new URLSearchParams();body.set('csrf_token',form.elements.namedItem('csrf_token').value);
var old=document.getElementById('passkey-error');if(old)old.parentNode.removeChild(old);
return fetch(form.getAttribute('data-options'),{method:'POST',body:body,credentials:'same-origin',headers:{accept:'application/json'}}).then(function(r){if(!r.ok)throw new Error('options '+r.status);return r.json()})
.catch(function(e){var text=form.getAttribute('data-failed');if(text){var note=document.createElement('p');note.id='passkey-error';note.className='error';note.setAttribute('role','alert');note.textContent=text;form.parentNode.insertBefore(note,form)}throw e})}`;

/**
 * The login page's script: "Sign in with a passkey" (WebAuthn `navigator.credentials.get`).
 *
 * @example
 * renderPageHtml({ ..., script: { nonce, source: passkeySignInScript() } })
 */
export function passkeySignInScript(): string {
  return `(function(){'use strict';
var box=document.getElementById('passkey'),form=document.getElementById('passkey-form'),button=document.getElementById('passkey-button');
if(!box||!form||!button||!window.PublicKeyCredential||!navigator.credentials)return;
${HELPERS}
box.hidden=false;
button.addEventListener('click',function(){button.disabled=true;
challenge(form).then(function(o){o.challenge=b64(o.challenge);o.allowCredentials=ids(o.allowCredentials);return navigator.credentials.get({publicKey:o})})
.then(function(c){var r=c.response;form.elements.namedItem('assertion').value=JSON.stringify({id:c.id,rawId:enc(c.rawId),type:c.type,clientExtensionResults:c.getClientExtensionResults(),
response:{clientDataJSON:enc(r.clientDataJSON),authenticatorData:enc(r.authenticatorData),signature:enc(r.signature),userHandle:r.userHandle?enc(r.userHandle):undefined}});form.submit()})
.catch(function(){button.disabled=false})});
})();`;
}

/**
 * The "add a passkey" page's script (WebAuthn `navigator.credentials.create`).
 *
 * @example
 * renderPageHtml({ ..., script: { nonce, source: passkeyRegisterScript() } })
 */
export function passkeyRegisterScript(): string {
  return `(function(){'use strict';
var form=document.getElementById('passkey-form'),button=document.getElementById('passkey-button');
if(!form||!button||!window.PublicKeyCredential||!navigator.credentials)return;
${HELPERS}
button.hidden=false;
button.addEventListener('click',function(){button.disabled=true;
challenge(form).then(function(o){o.challenge=b64(o.challenge);o.user.id=b64(o.user.id);o.excludeCredentials=ids(o.excludeCredentials);return navigator.credentials.create({publicKey:o})})
.then(function(c){var r=c.response;form.elements.namedItem('attestation').value=JSON.stringify({id:c.id,rawId:enc(c.rawId),type:c.type,clientExtensionResults:c.getClientExtensionResults(),
response:{clientDataJSON:enc(r.clientDataJSON),attestationObject:enc(r.attestationObject),transports:r.getTransports?r.getTransports():[]}});form.submit()})
.catch(function(){button.disabled=false})});
})();`;
}
