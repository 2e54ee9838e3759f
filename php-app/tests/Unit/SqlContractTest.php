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
        self::assertCount(count(Sql::cases()), $contract);
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
}
