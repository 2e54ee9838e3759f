package bidbench.json;

/**
 * A JSON number as spelled in the request. Kept as text so that validation judges the value
 * ({@code 5}, {@code 5.0} and {@code 5e0} are all 5) without a lossy double in between.
 */
public record JsonNumber(String text) {}
