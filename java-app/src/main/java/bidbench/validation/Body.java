package bidbench.validation;

import java.util.Map;

/** A request body that passed its {@link Schema}: typed values by field name. */
public final class Body {

    private final Map<String, Object> values;

    Body(Map<String, Object> values) {
        this.values = Map.copyOf(values);
    }

    public int integer(String name) {
        return (Integer) require(name);
    }

    public long cents(String name) {
        return (Long) require(name);
    }

    public String text(String name) {
        return (String) require(name);
    }

    private Object require(String name) {
        Object value = values.get(name);
        if (value == null) {
            throw new IllegalArgumentException("no validated field " + name);
        }
        return value;
    }
}
