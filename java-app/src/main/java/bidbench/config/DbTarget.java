package bidbench.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Where the database is: from {@code DATABASE_URL} ({@code postgresql://user:password@host:port/db})
 * or, when that is unset, from libpq's {@code PGHOST}, {@code PGPORT}, {@code PGUSER},
 * {@code PGPASSWORD} and {@code PGDATABASE}.
 */
public record DbTarget(String host, int port, String database, String user, String password, String query) {

    public static DbTarget fromEnv(Map<String, String> env) {
        String url = env.get("DATABASE_URL");
        if (url != null && !url.isBlank()) {
            return parseUrl(url.trim());
        }
        String user = nonEmpty(env.get("PGUSER"), System.getProperty("user.name"));
        String host = nonEmpty(env.get("PGHOST"), "localhost");
        if (host.startsWith("/")) {
            throw new IllegalArgumentException("PGHOST is a Unix socket directory; pgjdbc needs a TCP host");
        }
        return new DbTarget(host, port(nonEmpty(env.get("PGPORT"), "5432"), "PGPORT"),
                nonEmpty(env.get("PGDATABASE"), user), user, env.get("PGPASSWORD"), null);
    }

    static DbTarget parseUrl(String url) {
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("DATABASE_URL is not a URL: " + e.getReason());
        }
        if (!"postgresql".equals(uri.getScheme()) && !"postgres".equals(uri.getScheme())) {
            throw new IllegalArgumentException("DATABASE_URL must start with postgresql://");
        }
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("DATABASE_URL has no host");
        }
        String user = null;
        String password = null;
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
            password = colon < 0 ? null : decode(userInfo.substring(colon + 1));
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        String database = decode(path.startsWith("/") ? path.substring(1) : path);
        return new DbTarget(uri.getHost(), uri.getPort() < 0 ? 5432 : uri.getPort(),
                database.isEmpty() ? user : database, user, password, uri.getRawQuery());
    }

    /** The JDBC URL, without credentials (HikariCP gets those separately, so they never appear in a URL). */
    public String jdbcUrl() {
        String base = "jdbc:postgresql://" + host + ":" + port + "/" + database;
        return query == null || query.isEmpty() ? base : base + "?" + query;
    }

    /** The URL for logs and the start-up line: the password replaced by {@code ***}. */
    public String masked() {
        StringBuilder out = new StringBuilder("postgresql://");
        if (user != null) {
            out.append(user);
            if (password != null) {
                out.append(":***");
            }
            out.append('@');
        }
        out.append(host).append(':').append(port).append('/').append(database);
        return out.toString();
    }

    @Override
    public String toString() {
        return masked(); // records print every component; never the password
    }

    private static String decode(String s) {
        // URLDecoder is for forms, where '+' means space; in a URL's user info it is a plain '+'.
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    private static String nonEmpty(String value, String fallback) {
        return value == null || value.isBlank() ? fallback : value;
    }

    static int port(String value, String name) {
        try {
            int port = Integer.parseInt(value.trim());
            if (port >= 0 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(name + " must be a port number, got '" + value + "'");
    }
}
