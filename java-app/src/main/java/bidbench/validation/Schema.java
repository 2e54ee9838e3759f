package bidbench.validation;

import bidbench.http.Errors;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** A request body schema: its fields in the order of {@code properties} in openapi.yaml. */
public final class Schema {

    public static final Schema ITEM_CREATE = new Schema(
            new Field("seller_id", FieldType.ID),
            new Field("category_id", FieldType.ID),
            new Field("title", FieldType.TITLE),
            new Field("description", FieldType.DESCRIPTION),
            new Field("initial_price_cents", FieldType.CENTS),
            new Field("duration_seconds", FieldType.DURATION_SECONDS));

    public static final Schema ITEM_UPDATE = new Schema(
            new Field("title", FieldType.TITLE),
            new Field("description", FieldType.DESCRIPTION));

    public static final Schema BID_CREATE = new Schema(
            new Field("bidder_id", FieldType.ID),
            new Field("amount_cents", FieldType.CENTS));

    public static final Schema USER_CREATE = new Schema(
            new Field("nickname", FieldType.NICKNAME),
            new Field("region_id", FieldType.ID));

    private final List<Field> fields;
    private final Set<String> names;

    private Schema(Field... fields) {
        this.fields = List.of(fields);
        this.names = this.fields.stream().map(Field::name).collect(Collectors.toUnmodifiableSet());
    }

    /** Contract steps 7.4 and 7.5: unknown keys first, then each field in order. */
    public Body validate(Map<String, Object> json) {
        for (String key : json.keySet()) {
            if (!names.contains(key)) {
                throw Errors.unknownFields();
            }
        }
        Map<String, Object> values = new HashMap<>();
        for (Field field : fields) {
            if (!json.containsKey(field.name())) {
                throw Errors.missingField(field.name());
            }
            Object value = field.type().validate(json.get(field.name()));
            if (value == null) {
                throw Errors.invalidField(field.name());
            }
            values.put(field.name(), value);
        }
        return new Body(values);
    }
}
