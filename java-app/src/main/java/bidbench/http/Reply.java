package bidbench.http;

import bidbench.json.JsonViews;

/** A finished response: status, compact JSON body, and the Allow header of a 405. */
public record Reply(int status, byte[] body, String allow) {

    public static Reply ok(byte[] body) {
        return new Reply(200, body, null);
    }

    public static Reply created(byte[] body) {
        return new Reply(201, body, null);
    }

    public static Reply error(ApiException e) {
        return new Reply(e.status(), JsonViews.error(e.code(), e.getMessage()), e.allow());
    }
}
