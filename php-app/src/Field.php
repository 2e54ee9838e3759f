<?php

declare(strict_types=1);

namespace Bidbench;

/** The field rules of contract/README.md ("Field rules"): one case per kind of request field. */
enum Field
{
    case Id;
    case Cents;
    case Duration;
    case Title;
    case Description;
    case Nickname;

    /**
     * The field's value if it is valid, else null (which the caller turns into `invalid field: <name>`).
     * JSON null is never valid; json_decode gives ints for integer literals and floats for the rest.
     */
    public function accept(mixed $value): int|string|null
    {
        return match ($this) {
            self::Id => self::integral($value, 1, 2147483647),
            self::Cents => self::integral($value, 1, 100000000000),
            self::Duration => self::integral($value, 60, 2592000),
            self::Title => self::text($value, 1, 200),
            self::Description => self::text($value, 0, 10000),
            self::Nickname => is_string($value) && preg_match('/^[A-Za-z0-9_]{3,32}\z/', $value) === 1 ? $value : null,
        };
    }

    /**
     * "Integral value" means the number's value, not its spelling: 5, 5.0 and 5e0 are 5 (JavaScript
     * cannot tell them apart), 5.5 is not, and 1e400 (INF after json_decode) is out of range.
     * Strings and booleans are never numbers.
     */
    private static function integral(mixed $value, int $min, int $max): ?int
    {
        if (is_int($value)) {
            return $value >= $min && $value <= $max ? $value : null;
        }
        if (is_float($value) && is_finite($value) && floor($value) === $value && $value >= $min && $value <= $max) {
            return (int) $value;
        }
        return null;
    }

    /** Length in Unicode code points; the body is valid UTF-8 by now, and JSON escapes decode to valid UTF-8. */
    private static function text(mixed $value, int $min, int $max): ?string
    {
        if (!is_string($value) || str_contains($value, "\0")) {
            return null;
        }
        $bytes = strlen($value);
        // A code point takes 1 to 4 bytes: only count when the byte length alone cannot decide.
        if ($bytes < $min || ($bytes > $max && mb_strlen($value, 'UTF-8') > $max)) {
            return null;
        }
        return $value;
    }
}
