/**
 * One raw HTTP/1.1 exchange over its own connection, for what a client library would not send: repeated fields,
 * methods fetch forbids, a body without a Content-Type.
 */
import { connect } from 'node:net';

/** What came back: the status code, the head (status line and fields) and the body, as text. */
export interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/**
 * Sends `lines` (the request line and fields), then `Host`, `Content-Length` and `Connection: close`, then `body`,
 * and answers what the server wrote before it closed the connection.
 * @example const answer = await rawExchange(base, ['TRACE /sentinel/… HTTP/1.1']);
 */
export function rawExchange(url: string, lines: string[], body = ''): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `${[...lines, `Host: ${hostname}:${port}`, `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`,
      );
    });
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      const end = text.indexOf('\r\n\r\n');
      resolve({ status, head: text.slice(0, end), body: text.slice(end + 4) });
    });
  });
}
