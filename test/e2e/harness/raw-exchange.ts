import net from 'node:net';

/**
 * Writes raw bytes to the edge's HTTP port in one write and collects everything the edge sends
 * until it closes the connection. Resolves with the text and the status of each response in it.
 */
export function rawExchange(port: number, bytes: string): Promise<{ text: string; statuses: number[] }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', reject);
    socket.once('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const statuses = [...text.matchAll(/(?:^|\r\n)HTTP\/1\.[01] (\d{3}) /g)].map((match) => Number(match[1]));
      resolve({ text, statuses });
    });
    socket.write(bytes);
  });
}
