package bidbench.db;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.Predicate;

/** Sorts SQLExceptions into the cases the contract distinguishes. */
public final class SqlErrors {

    public static final String FOREIGN_KEY_VIOLATION = "23503";
    public static final String UNIQUE_VIOLATION = "23505";

    // 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300 too_many_connections:
    // the server is going away or not taking us, which is "database unavailable" for a client.
    private static final Set<String> UNAVAILABLE_STATES = Set.of("57P01", "57P02", "57P03", "53300");
    private static final Set<String> SERVER_GONE_STATES = Set.of("57P01", "57P02", "57P03");

    private SqlErrors() {}

    /**
     * True when no connection could be had or the one we had was lost: connection refused or reset,
     * server shutdown, or the 5 s checkout timeout of every JAVA_POOL choice. HikariCP's and the unpooled
     * driver's timeouts are SQLTransientConnectionExceptions; commons-dbcp2 wraps commons-pool2's
     * NoSuchElementException ("Timeout waiting for idle object", or "Unable to validate object" when a
     * new connection fails validation) in a plain SQLException without an SQLSTATE.
     */
    public static boolean isUnavailable(SQLException e) {
        return anyCause(e, t -> t instanceof SQLTransientConnectionException
                || t instanceof SQLNonTransientConnectionException
                || t instanceof NoSuchElementException
                || hasState(t, UNAVAILABLE_STATES));
    }

    /**
     * True when the server is gone or refusing us (SQLSTATE class 08, or 57P01-57P03 anywhere in the cause
     * chain), as opposed to a pool that is only exhausted: HikariCP's checkout timeout carries the last
     * connect failure as its cause while the database is down, and none while it is merely busy.
     */
    public static boolean isConnectionLost(SQLException e) {
        return anyCause(e, t -> hasState(t, SERVER_GONE_STATES));
    }

    private static boolean anyCause(Throwable e, Predicate<Throwable> test) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (test.test(t)) {
                return true;
            }
        }
        return false;
    }

    /** An SQLException whose SQLSTATE is of class 08 (connection exception) or one of {@code states}. */
    private static boolean hasState(Throwable t, Set<String> states) {
        String state = t instanceof SQLException sql ? sql.getSQLState() : null;
        return state != null && (state.startsWith("08") || states.contains(state));
    }

    /**
     * A failure to obtain a connection, as an "unavailable" exception. HikariCP reports every such failure
     * as its checkout timeout (an SQLTransientConnectionException whose cause is the last connect error),
     * but dbcp2 and the unpooled driver pass a connect error through as it is, and some of those carry an
     * SQLSTATE outside class 08: 3D000 while the database is dropped and re-created by a reset, 28P01 for
     * a rejected password. For the client each of them is the same: no connection, 503.
     */
    public static SQLException checkoutFailure(SQLException e) {
        if (isUnavailable(e)) {
            return e;
        }
        return new SQLTransientConnectionException("no connection: " + e.getMessage(), e.getSQLState(), e);
    }

    public static boolean is(SQLException e, String sqlState) {
        return sqlState.equals(e.getSQLState());
    }
}
