<?php

declare(strict_types=1);

namespace Bidbench;

/** The wire format of docs/design.md §2.4: compact JSON and the one timestamp format. */
final class Json
{
    /**
     * Compact JSON, no trailing newline. Unicode and slashes stay unescaped (smaller; escaping style does
     * not matter to the contract). PHP arrays keep insertion order, so field order is the order the
     * Format methods build.
     *
     * @param array<mixed> $value
     */
    public static function encode(array $value): string
    {
        return json_encode($value, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
    }

    /**
     * A timestamptz as PostgreSQL sends it in a UTC session ("2026-11-21 14:21:00.12+00") to
     * "2026-11-21T14:21:00.120Z": always three millisecond digits, always Z. PostgreSQL drops trailing
     * zeros of the fraction and the columns are timestamptz(3), so at most three digits arrive. Plain
     * string work on the fast path: a list page formats 40 of these. Any other offset (a session that is
     * not UTC) goes through DateTime and is converted, never printed in local time.
     */
    public static function timestamp(string $pg): string
    {
        $length = strlen($pg);
        if ($length >= 22 && $length <= 26 && $pg[10] === ' ' && str_ends_with($pg, '+00')) {
            $fraction = $length === 22 ? '' : substr($pg, 20, $length - 23);
            return substr($pg, 0, 10) . 'T' . substr($pg, 11, 8) . '.' . str_pad($fraction, 3, '0') . 'Z';
        }
        $parsed = new \DateTimeImmutable($pg);
        return $parsed->setTimezone(new \DateTimeZone('UTC'))->format('Y-m-d\TH:i:s.v\Z');
    }
}
