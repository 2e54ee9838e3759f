<?php

declare(strict_types=1);

namespace Bidbench\Tests;

/** Reads the normative files of contract/ so that tests compare against them, not against copies. */
final class Contract
{
    public static function dir(): string
    {
        return dirname(__DIR__, 2) . '/contract';
    }

    /**
     * The statements of queries.sql by name, each without its trailing `;`.
     *
     * @return array<string, string>
     */
    public static function queries(): array
    {
        $lines = explode("\n", (string) file_get_contents(self::dir() . '/queries.sql'));
        $queries = [];
        for ($i = 0, $n = count($lines); $i < $n; $i++) {
            if (preg_match('/^-- name: (\w+)/', $lines[$i], $m) !== 1) {
                continue;
            }
            $body = [];
            while (++$i < $n) {
                $body[] = $lines[$i];
                if (str_ends_with(rtrim($lines[$i]), ';')) {
                    break;
                }
            }
            $queries[$m[1]] = substr(rtrim(implode("\n", $body)), 0, -1);
        }
        return $queries;
    }

    /**
     * The statements of the per-field variant, in order, each without its trailing `;`: the ```sql
     * block of contract/README.md's "Deliberately unequal variants" section (they are not in queries.sql).
     *
     * @return list<string>
     */
    public static function perFieldQueries(): array
    {
        $readme = (string) file_get_contents(self::dir() . '/README.md');
        $section = strstr($readme, "\n## Deliberately unequal variants\n");
        if ($section === false || preg_match('/^```sql\n(.*?)^```$/ms', $section, $m) !== 1) {
            throw new \RuntimeException('no ```sql block under "Deliberately unequal variants" in contract/README.md');
        }
        return array_map(
            static fn (string $line): string => substr(rtrim($line), 0, -1),
            explode("\n", rtrim($m[1])),
        );
    }

    /**
     * The `properties` keys of one schema in openapi.yaml, in order. A line-based reader of the file's
     * fixed layout (no YAML extension needed): `    Name:` under components/schemas, then the keys
     * indented by eight spaces under its `      properties:`.
     *
     * @return list<string>
     */
    public static function properties(string $schema): array
    {
        $lines = explode("\n", (string) file_get_contents(self::dir() . '/openapi.yaml'));
        $start = array_search('    ' . $schema . ':', $lines, true);
        if ($start === false) {
            throw new \RuntimeException("no schema {$schema} in openapi.yaml");
        }
        $keys = [];
        $inProperties = false;
        for ($i = $start + 1; $i < count($lines); $i++) {
            $line = $lines[$i];
            if (preg_match('/^ {4}\S/', $line) === 1) {
                break; // the next schema
            }
            if ($line === '      properties:') {
                $inProperties = true;
                continue;
            }
            if ($inProperties && preg_match('/^ {8}(\w+):/', $line, $m) === 1) {
                $keys[] = $m[1];
            } elseif ($inProperties && preg_match('/^ {0,7}\S/', $line) === 1) {
                break;
            }
        }
        return $keys;
    }
}
