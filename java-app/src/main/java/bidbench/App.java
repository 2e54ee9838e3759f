package bidbench;

import bidbench.api.Api;
import bidbench.config.Config;
import bidbench.db.Database;
import bidbench.http.AppHandler;
import bidbench.http.JsonErrorHandler;
import org.eclipse.jetty.http.HttpCompliance;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/** The running service: the pool, and Jetty in front of it. */
@SuppressWarnings("try") // close() throws what Jetty's stop() throws, InterruptedException included
public final class App implements AutoCloseable {

    /** How long SIGTERM lets in-flight requests finish (contract: up to 10 s). */
    public static final long STOP_TIMEOUT_MS = 10_000;

    /** How long a request body may go without a byte before it gets 408 (contract: 30 s). */
    public static final long BODY_STALL_TIMEOUT_MS = 30_000;

    /**
     * The accept queue, as nginx's {@code listen ... backlog=4096} and the Node app's listen() backlog
     * (the kernel caps it at net.core.somaxconn). Jetty's default, the JVM's 50, dropped the handshakes of
     * the thousands of connections the load driver opens against an overloaded instance: each then waited
     * for a SYN retransmit (1 s, 3 s, ...), which only this app paid.
     */
    public static final int LISTEN_BACKLOG = 4096;

    private final Server server;
    private final ServerConnector connector;
    private final Database database;

    private App(Server server, ServerConnector connector, Database database) {
        this.server = server;
        this.connector = connector;
        this.database = database;
    }

    public static App start(Config config) throws Exception {
        Database database = Database.start(config);
        try {
            // min = max: a fixed pool, like the thesis's Jetty configuration (seed 003 §6.2).
            QueuedThreadPool threads = new QueuedThreadPool(config.javaThreads(), config.javaThreads());
            threads.setName("jetty");
            Server server = new Server(threads);

            HttpConfiguration http = new HttpConfiguration();
            http.setSendServerVersion(false);
            http.setSendXPoweredBy(false);
            http.setSendDateHeader(true);
            // Routing works on the raw path (contract: no decoding, no normalization), so Jetty must not
            // reject %2F, %2e or ';' on its own with a differently shaped 400.
            http.setUriCompliance(UriCompliance.UNSAFE);
            // No per-connection header cache: from a connection's second request on, Jetty keeps a 1024-entry
            // trie of its header fields (~40 KB of heap) for as long as it stays open. An overloaded instance
            // holds thousands of open keep-alive connections (the load driver opens up to BB_MAX_CONNS=5000 when requests queue), and
            // their caches filled the 256 MB heap: the JVM died of OutOfMemoryError in a capacity search.
            http.setHeaderCacheSize(0);
            // An absolute-form target is routed on its path and its authority wins over the Host header
            // (RFC 9112 §3.2.2, contract "Request syntax"), as in nginx and the Node app; Jetty's default
            // refuses a mismatch with 400.
            http.setHttpCompliance(
                    HttpCompliance.RFC9110.with("BIDBENCH", HttpCompliance.Violation.MISMATCHED_AUTHORITY));

            ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
            connector.setHost(config.host());
            connector.setPort(config.port());
            connector.setAcceptQueueSize(LISTEN_BACKLOG);
            // The contract's 30 s for a stalled body (contract/README.md): Jetty's default, stated. A body
            // read that idles this long gets a failure chunk, answered with 408 (http/BodyReader).
            connector.setIdleTimeout(BODY_STALL_TIMEOUT_MS);
            server.addConnector(connector);

            server.setHandler(new GracefulHandler(new AppHandler(new Api(database), config.serverTiming())));
            server.setErrorHandler(new JsonErrorHandler(config.serverTiming()));
            server.setStopTimeout(STOP_TIMEOUT_MS);
            server.start();
            return new App(server, connector, database);
        } catch (Exception | Error e) {
            database.close();
            throw e;
        }
    }

    public int port() {
        return connector.getLocalPort();
    }

    public int acceptors() {
        return connector.getAcceptors();
    }

    public int selectors() {
        return connector.getSelectorManager().getSelectorCount();
    }

    public void join() throws InterruptedException {
        server.join();
    }

    /** Stops accepting, lets in-flight requests finish (up to the stop timeout), then closes the pool. */
    @Override
    public void close() throws Exception {
        try {
            server.stop();
        } finally {
            database.close();
        }
    }
}
