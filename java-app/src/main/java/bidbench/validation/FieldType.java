package bidbench.validation;

import bidbench.json.JsonNumber;
import java.math.BigDecimal;
import java.math.RoundingMode;
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
     * A JSON number whose value (not spelling) is an integer in [min, max]. The range is checked
     * before integrality so that an absurd exponent such as 1e999999999 is rejected without work.
     */
    static Long integral(Object raw, long min, long max) {
        if (!(raw instanceof JsonNumber number)) {
            return null;
        }
        BigDecimal value;
        try {
            value = new BigDecimal(number.text());
        } catch (NumberFormatException e) {
            return null; // an exponent beyond int range: certainly out of range
        }
        if (value.compareTo(BigDecimal.valueOf(min)) < 0 || value.compareTo(BigDecimal.valueOf(max)) > 0) {
            return null;
        }
        try {
            return value.setScale(0, RoundingMode.UNNECESSARY).longValueExact();
        } catch (ArithmeticException e) {
            return null; // a fractional part
        }
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
