package bidbench.validation;

import bidbench.http.Errors;

/** Contract step 6: the media type before any {@code ;}, trimmed, must be application/json. */
public final class ContentType {

    private ContentType() {}

    public static void requireJson(String header) {
        if (header == null) {
            throw Errors.unsupportedMediaType();
        }
        int semicolon = header.indexOf(';');
        String mediaType = (semicolon < 0 ? header : header.substring(0, semicolon)).trim();
        if (!mediaType.equalsIgnoreCase("application/json")) {
            throw Errors.unsupportedMediaType();
        }
    }
}
