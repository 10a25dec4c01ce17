// The address of a replicated service, as a Kubernetes Service gives one: a TCP port in front of the
// replicas that sends each new connection to the next replica, and to the one after it when that one
// refuses (killed, not yet back). A connection already open to a replica that dies is cut, as it is
// in a deployment; the caller sees a network error and retries.
import net from 'node:net';

export async function startBalancer(backendPorts) {
  let next = 0;
  const sockets = new Set();
  const track = (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  /** Connects to the first replica that accepts, starting at the next in turn; null when none does. */
  const connectAny = async () => {
    const start = next++;
    for (let i = 0; i < backendPorts.length; i += 1) {
      const port = backendPorts[(start + i) % backendPorts.length];
      const upstream = await new Promise((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        socket.once('connect', () => resolve(socket));
        socket.once('error', () => {
          socket.destroy();
          resolve(null);
        });
      });
      if (upstream) return upstream;
    }
    return null;
  };
  const server = net.createServer((client) => {
    track(client);
    client.pause();
    connectAny().then((upstream) => {
      if (!upstream || client.destroyed) {
        upstream?.destroy();
        client.destroy();
        return;
      }
      track(upstream);
      client.pipe(upstream).pipe(client);
      client.resume();
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: server.address().port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
