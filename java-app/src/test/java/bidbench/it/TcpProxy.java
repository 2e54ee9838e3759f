package bidbench.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP forwarder in front of the test database, so a test can take "the database" down
 * (close every connection, refuse new ones) and bring it back, without touching the shared server.
 */
final class TcpProxy implements AutoCloseable {

    private final String targetHost;
    private final int targetPort;
    private final int port;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile ServerSocket server;
    private volatile long delayMillis;

    TcpProxy(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        try (ServerSocket probe = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            this.port = probe.getLocalPort();
        }
    }

    int port() {
        return port;
    }

    /** Holds every answer of the database back this long: a slow query, seen from the app. */
    void delayAnswers(long millis) {
        delayMillis = millis;
    }

    synchronized void up() throws IOException {
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), port));
        server = socket;
        Thread acceptor = new Thread(() -> accept(socket), "proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Refuses new connections and resets the open ones, as a crashed server would. */
    synchronized void down() throws IOException {
        if (server != null) {
            server.close();
            server = null;
        }
        for (Socket socket : sockets) {
            reset(socket);
        }
        sockets.clear();
    }

    /**
     * Keeps a connection accepted by {@code listener} only while that listener is still the open one: a
     * connection accepted just before {@link #down()} and registered after it would otherwise outlive
     * "the database" (the pool's second connection, opened as the test took the database down, once
     * answered a query that had to fail).
     */
    private synchronized boolean register(ServerSocket listener, Socket client, Socket upstream) {
        if (server != listener) {
            return false;
        }
        sockets.add(client);
        sockets.add(upstream);
        return true;
    }

    private static void reset(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
            socket.close();
        } catch (IOException e) {
            // already gone
        }
    }

    private void accept(ServerSocket listener) {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket upstream = new Socket(targetHost, targetPort);
                if (!register(listener, client, upstream)) {
                    reset(client);
                    reset(upstream);
                    continue;
                }
                pump(client, upstream, false);
                pump(upstream, client, true);
            } catch (IOException e) {
                // closed by down(), or the target refused: the client sees its connection drop
            }
        }
    }

    private void pump(Socket from, Socket to, boolean answers) {
        Thread thread = new Thread(() -> {
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                byte[] buffer = new byte[16384];
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    if (answers && delayMillis > 0) {
                        Thread.sleep(delayMillis);
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // one side closed
            } finally {
                try {
                    to.close();
                    from.close();
                } catch (IOException e) {
                    // nothing left to do
                }
            }
        }, "proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() throws IOException {
        down();
    }
}
