package bidbench.validation;

import bidbench.json.JsonNumber;
import java.util.regex.Pattern;

/** The field rules of contract/README.md. Each returns the typed value, or null when the raw value is wrong. */
public enum FieldType {
    ID {
        @Override
        Object validate(Object raw) {
            Long value = integral(raw, 1, Integer.MAX_VALUE);
            return value == null ? null : Integer.valueOf(value.intValue());
        }
    },
    CENTS {
        @Override
        Object validate(Object raw) {
            return integral(raw, 1, 100_000_000_000L);
        }
    },
    DURATION_SECONDS {
        @Override
        Object validate(Object raw) {
            Long value = integral(raw, 60, 2_592_000);
            return value == null ? null : Integer.valueOf(value.intValue());
        }
    },
    TITLE {
        @Override
        Object validate(Object raw) {
            return text(raw, 1, 200);
        }
    },
    DESCRIPTION {
        @Override
        Object validate(Object raw) {
            return text(raw, 0, 10_000);
        }
    },
    NICKNAME {
        @Override
        Object validate(Object raw) {
            return raw instanceof String s && NICKNAME_PATTERN.matcher(s).matches() ? s : null;
        }
    };

    private static final Pattern NICKNAME_PATTERN = Pattern.compile("[A-Za-z0-9_]{3,32}");

    abstract Object validate(Object raw);

    /**
     * A JSON number whose IEEE-754 double value (what JavaScript's JSON.parse and PHP's json_decode yield)
     * is an integer in [min, max]. Every integer of the contract's ranges is exact in a double, so this
     * only decides spellings such as 1.0000000000000001, which all three apps must read as 1.
     */
    static Long integral(Object raw, long min, long max) {
        if (!(raw instanceof JsonNumber number)) {
            return null;
        }
        double value;
        try {
            value = Double.parseDouble(number.text());
        } catch (NumberFormatException e) {
            return null;
        }
        if (!Double.isFinite(value) || value != Math.rint(value) || value < min || value > max) {
            return null;
        }
        return (long) value;
    }

    /** A string of min..max Unicode code points without U+0000. */
    static String text(Object raw, int min, int max) {
        if (!(raw instanceof String s) || s.indexOf('\0') >= 0) {
            return null;
        }
        // Surrogate pairs were validated by the parser, so code points are scalar values here.
        int codePoints = s.codePointCount(0, s.length());
        return codePoints >= min && codePoints <= max ? s : null;
    }
}
