<?php

declare(strict_types=1);

namespace Bidbench;

/**
 * Steps 1 and 4 to 7 of the contract's request handling order. Each check throws the contract's
 * ApiError; App calls them in the contract's order and answers with the first failure.
 */
final class Validation
{
    public const BODY_LIMIT = 65536;

    /** "Nesting deeper than 32 containers" is invalid JSON. PHP counts a scalar as one level, so 32 containers need depth 33. */
    public const JSON_DEPTH = 33;

    private const PAGING = [
        // name => [default, min, max], `limit` first because it is checked first.
        'limit' => [20, 1, 100],
        'offset' => [0, 0, 10000],
    ];

    /**
     * Step 1: the body, never buffered past the limit. nginx already refuses a declared Content-Length
     * over the limit and counts a chunked body while it streams; this is the same rule again in PHP, so
     * the app is correct on its own (behind another server, or with nginx's limit raised).
     *
     * @param resource $input php://input
     */
    public static function readBody($input, ?string $declaredLength): string
    {
        if ($declaredLength !== null && $declaredLength !== '' && strspn($declaredLength, '0123456789') === strlen($declaredLength)) {
            $digits = ltrim($declaredLength, '0');
            if (strlen($digits) > 9 || (int) $digits > self::BODY_LIMIT) {
                throw ApiError::payloadTooLarge();
            }
        }
        $body = stream_get_contents($input, self::BODY_LIMIT + 1);
        if ($body === false) {
            return '';
        }
        if (strlen($body) > self::BODY_LIMIT) {
            throw ApiError::payloadTooLarge();
        }
        return $body;
    }

    /** Step 4: the raw `{id}` segment: 1 to 10 digits, value 1..2147483647. */
    public static function pathId(string $raw): int
    {
        $length = strlen($raw);
        if ($length < 1 || $length > 10 || strspn($raw, '0123456789') !== $length) {
            throw ApiError::badRequest('invalid path parameter: id');
        }
        $id = (int) $raw;
        if ($id < 1 || $id > 2147483647) {
            throw ApiError::badRequest('invalid path parameter: id');
        }
        return $id;
    }

    /**
     * Step 5: `limit` and `offset` from the raw query string, which is split on `&` and each part at
     * its first `=`, without percent-decoding (so not $_GET, which decodes, keeps the last duplicate
     * and rewrites names). A part without `=` is that name with an empty, hence invalid, value.
     *
     * @return array{0: int, 1: int} limit, offset
     */
    public static function paging(string $query): array
    {
        $seen = ['limit' => [], 'offset' => []];
        if ($query !== '') {
            foreach (explode('&', $query) as $part) {
                $eq = strpos($part, '=');
                $name = $eq === false ? $part : substr($part, 0, $eq);
                if (isset($seen[$name])) {
                    $seen[$name][] = $eq === false ? '' : substr($part, $eq + 1);
                }
            }
        }
        $values = [];
        foreach (self::PAGING as $name => [$default, $min, $max]) {
            $raw = $seen[$name];
            if ($raw === []) {
                $values[] = $default;
                continue;
            }
            $value = $raw[0];
            $length = strlen($value);
            if (count($raw) > 1 || $length < 1 || $length > 9 || strspn($value, '0123456789') !== $length
                || (int) $value < $min || (int) $value > $max) {
                throw ApiError::badRequest('invalid query parameter: ' . $name);
            }
            $values[] = (int) $value;
        }
        return [$values[0], $values[1]];
    }

    /** Step 6: the media type before any `;`, trimmed, case-insensitively `application/json`; parameters are ignored. */
    public static function contentType(?string $header): void
    {
        $media = $header === null ? '' : explode(';', $header, 2)[0];
        if (strcasecmp(trim($media, " \t"), 'application/json') !== 0) {
            throw ApiError::unsupportedMediaType();
        }
    }

    /**
     * Step 7: the body of a POST or PUT against its schema, in the contract's order.
     *
     * @param array<string, Field> $schema field name => rule, in `properties` order
     * @return array<string, int|string> the valid fields, by name
     */
    public static function body(string $body, array $schema): array
    {
        // 7.1. A UTF-8 BOM is valid UTF-8 text; json_decode then rejects it as invalid JSON (7.2), as the contract wants.
        if (!mb_check_encoding($body, 'UTF-8')) {
            throw ApiError::badRequest('request body is not valid UTF-8');
        }
        // 7.2. json_decode is strict RFC 8259 (no trailing commas, comments, NaN, leading zeros, trailing
        // garbage; empty input is a syntax error) and rejects an unpaired UTF-16 surrogate escape.
        try {
            $value = json_decode($body, true, self::JSON_DEPTH, JSON_THROW_ON_ERROR);
        } catch (\JsonException) {
            throw ApiError::badRequest('request body is not valid JSON');
        }
        // 7.3. Decoded as PHP arrays, {} and [] look alike: for valid JSON the first non-whitespace byte
        // tells an object. (Arrays rather than stdClass, because a key such as "\u0000a" is a valid JSON
        // key but an invalid property name, and must reach 7.4 as an unknown field.)
        if (!is_array($value) || ltrim($body, " \t\n\r")[0] !== '{') {
            throw ApiError::badRequest('request body must be a JSON object');
        }
        // 7.4. Duplicate keys were allowed by json_decode (the last one wins). Numeric keys became ints,
        // which are never schema names.
        foreach ($value as $key => $_) {
            if (!is_string($key) || !isset($schema[$key])) {
                throw ApiError::badRequest('request body has unknown fields');
            }
        }
        // 7.5. Each field in `properties` order: absent, then present but wrong (null is wrong, not absent).
        $fields = [];
        foreach ($schema as $name => $rule) {
            if (!array_key_exists($name, $value)) {
                throw ApiError::badRequest('missing field: ' . $name);
            }
            $accepted = $rule->accept($value[$name]);
            if ($accepted === null) {
                throw ApiError::badRequest('invalid field: ' . $name);
            }
            $fields[$name] = $accepted;
        }
        return $fields;
    }
}
