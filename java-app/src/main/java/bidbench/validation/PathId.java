package bidbench.validation;

import bidbench.http.Errors;

/** Contract step 4: the raw {id} segment, digits only, 1..2147483647. */
public final class PathId {

    private PathId() {}

    public static int parse(String raw) {
        int n = raw.length();
        if (n < 1 || n > 10) {
            throw Errors.invalidPathId();
        }
        long value = 0;
        for (int i = 0; i < n; i++) {
            char c = raw.charAt(i);
            if (c < '0' || c > '9') {
                throw Errors.invalidPathId();
            }
            value = value * 10 + (c - '0');
        }
        if (value < 1 || value > Integer.MAX_VALUE) {
            throw Errors.invalidPathId();
        }
        return (int) value;
    }
}
