<?php

declare(strict_types=1);

namespace Bidbench\Tests\Unit;

use Bidbench\Db;
use Bidbench\Sql;
use Bidbench\Tests\Contract;
use PHPUnit\Framework\TestCase;

/** The app's SQL is contract/queries.sql, statement by statement, byte for byte. */
final class SqlContractTest extends TestCase
{
    public function testEveryStatementIsTheContractText(): void
    {
        $contract = Contract::queries();
        self::assertCount(count(Sql::cases()) - count(Sql::PER_FIELD), $contract);
        foreach ($contract as $name => $text) {
            $sql = Sql::tryFrom($name);
            self::assertNotNull($sql, "queries.sql has {$name}, the app does not");
            self::assertSame($text, $sql->text(), $name);
        }
    }

    public function testPdoPlaceholders(): void
    {
        self::assertSame(
            'UPDATE items SET title = :p2::text, description = :p3::text' . "\n" . ' WHERE id = :p1::integer',
            Db::namedPlaceholders('UPDATE items SET title = $2::text, description = $3::text' . "\n" . ' WHERE id = $1::integer'),
        );
        foreach (Sql::cases() as $sql) {
            self::assertStringNotContainsString('$', Db::namedPlaceholders($sql->text()), $sql->value);
        }
    }

    public function testUnsortedVariantDropsOnlyOrderBy(): void
    {
        foreach (Sql::cases() as $sql) {
            if (!$sql->isList()) {
                continue;
            }
            $unsorted = $sql->unsortedText();
            self::assertStringNotContainsString('ORDER BY', $unsorted, $sql->value);
            $withoutOrder = preg_replace('/\s*ORDER BY [^\n]*/', '', $sql->text());
            self::assertSame(preg_replace('/\s+/', ' ', (string) $withoutOrder), preg_replace('/\s+/', ' ', $unsorted));
        }
        self::assertSame('SELECT id, name FROM regions', Sql::ListRegions->unsortedText());
        self::assertStringContainsString('LIMIT $2::integer OFFSET $3::integer', Sql::ListItemBids->unsortedText());
        self::assertFalse(Sql::TopBids->isList());
    }

    public function testPerFieldVariantIsTheContractReadmeText(): void
    {
        self::assertSame(
            Contract::perFieldQueries(),
            array_map(static fn (Sql $sql): string => $sql->text(), Sql::PER_FIELD),
        );
        // Every case that is not in queries.sql is a per-field statement, in the order they are sent.
        $contract = Contract::queries();
        $extra = array_values(array_filter(Sql::cases(), static fn (Sql $sql): bool => !isset($contract[$sql->value])));
        self::assertSame(Sql::PER_FIELD, $extra);
    }

    /** The single columns, in order, add up to get_item's row: same names, same order. */
    public function testPerFieldColumnsAreGetItemsColumns(): void
    {
        preg_match('/^SELECT (.*?)\s+FROM /s', Sql::GetItem->text(), $m);
        $getItem = array_map(
            static fn (string $column): string => (string) preg_replace('/^\w+\./', '', trim($column)),
            explode(',', $m[1]),
        );
        $perField = array_map(
            static fn (Sql $sql): string => preg_match('/^SELECT (?:\w+\.)?(\w+) FROM /', $sql->text(), $c) === 1 ? $c[1] : '',
            Sql::PER_FIELD,
        );
        self::assertSame($getItem, $perField);
    }
}
