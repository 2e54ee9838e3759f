package bidbench.validation;

import bidbench.http.Errors;
import bidbench.model.Paging;

/**
 * Contract step 5: {@code limit} and {@code offset} of the list endpoints, read from the raw query
 * string without percent-decoding. Other parameters are ignored; {@code limit} is judged first.
 */
public final class PagingQuery {

    private static final int DEFAULT_LIMIT = 20;
    private static final int DEFAULT_OFFSET = 0;

    private PagingQuery() {}

    public static Paging parse(String rawQuery) {
        if (rawQuery == null || rawQuery.isEmpty()) {
            return Paging.DEFAULT;
        }
        int limit = param(rawQuery, "limit", DEFAULT_LIMIT, 1, 100);
        int offset = param(rawQuery, "offset", DEFAULT_OFFSET, 0, 10_000);
        return new Paging(limit, offset);
    }

    private static int param(String rawQuery, String name, int fallback, int min, int max) {
        String raw = null;
        for (String part : rawQuery.split("&", -1)) {
            int eq = part.indexOf('=');
            String key = eq < 0 ? part : part.substring(0, eq);
            if (!key.equals(name)) {
                continue;
            }
            if (raw != null) {
                throw Errors.invalidQuery(name); // repeated
            }
            raw = eq < 0 ? "" : part.substring(eq + 1);
        }
        if (raw == null) {
            return fallback;
        }
        int value = digits(raw);
        if (value < min || value > max) {
            throw Errors.invalidQuery(name);
        }
        return value;
    }

    /** ^[0-9]{1,9}$ as a number, or -1. Nine digits always fit an int. */
    private static int digits(String raw) {
        int n = raw.length();
        if (n < 1 || n > 9) {
            return -1;
        }
        int value = 0;
        for (int i = 0; i < n; i++) {
            char c = raw.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }
}
