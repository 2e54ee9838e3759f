<?php

declare(strict_types=1);

namespace Bidbench\Tests\Unit;

use Bidbench\Config;
use Bidbench\ConfigError;
use Bidbench\LogLevel;
use PHPUnit\Framework\TestCase;

final class ConfigTest extends TestCase
{
    public function testDefaults(): void
    {
        $config = Config::fromArray(['DATABASE_URL' => 'postgresql://bidbench:s3cret@127.0.0.1:5432/bidbench']);
        self::assertSame('127.0.0.1', $config->host);
        self::assertSame(8080, $config->port);
        self::assertSame(10, $config->dbPoolSize);
        self::assertSame(10, $config->fpmChildren);
        self::assertFalse($config->jit);
        self::assertSame(LogLevel::Info, $config->logLevel);
        self::assertTrue($config->serverTiming);
        self::assertFalse($config->unfairUnsorted);
        self::assertFalse($config->unfairPerField);
        self::assertSame('bidbench', $config->dbUser);
        self::assertSame('s3cret', $config->dbPassword);
    }

    public function testStartupLineMasksThePassword(): void
    {
        $config = Config::fromArray([
            'DATABASE_URL' => 'postgresql://bidbench:s3cret@127.0.0.1:5432/bidbench',
            'PORT' => '9000', 'PHP_FPM_CHILDREN' => '4', 'DB_POOL_SIZE' => '4', 'PHP_JIT' => '1',
            'LOG_LEVEL' => 'debug', 'SERVER_TIMING' => '0',
        ]);
        $fields = $config->startupFields(['php_version' => '8.2']);
        self::assertSame('postgresql://bidbench:***@127.0.0.1:5432/bidbench', $fields['db']);
        self::assertSame(['impl', 'host', 'port', 'db', 'db_pool_size', 'log_level', 'server_timing'], array_slice(array_keys($fields), 0, 7));
        self::assertSame(9000, $fields['port']);
        self::assertSame(4, $fields['php_fpm_children']);
        self::assertSame(4, $fields['db_connections']);
        self::assertTrue($fields['php_jit']);
        self::assertFalse($fields['server_timing']);
        self::assertSame('debug', $fields['log_level']);
        self::assertStringNotContainsString('s3cret', (string) json_encode($fields));
    }

    public function testUnequalVariants(): void
    {
        $config = Config::fromArray(['BIDBENCH_UNFAIR_PER_FIELD' => '1']);
        self::assertTrue($config->unfairPerField);
        self::assertFalse($config->unfairUnsorted);
        $fields = $config->startupFields(['php_version' => '8.2']);
        self::assertTrue($fields['unfair_per_field']);
        self::assertFalse($fields['unfair_unsorted']);
        $keys = array_keys($fields);
        self::assertSame('unfair_per_field', $keys[array_search('unfair_unsorted', $keys, true) + 1]);

        self::assertFalse(Config::fromArray(['BIDBENCH_UNFAIR_PER_FIELD' => '0'])->unfairPerField);
        self::assertTrue(Config::fromArray(['BIDBENCH_UNFAIR_UNSORTED' => '1'])->unfairUnsorted);
        self::assertContains('BIDBENCH_UNFAIR_PER_FIELD', Config::VARIABLES);
    }

    public function testDsn(): void
    {
        $config = Config::fromArray(['DATABASE_URL' => 'postgresql://u%40x:p%3Aw@db.example:6543/my%20db?sslmode=require']);
        self::assertSame('u@x', $config->dbUser);
        self::assertSame('p:w', $config->dbPassword);
        self::assertSame(
            "pgsql:host='db.example';port='6543';dbname='my db';sslmode='require';options='-c TimeZone=UTC';application_name='bidbench-php'",
            $config->pdoDsn(),
        );
    }

    public function testPgVariablesWhenNoUrl(): void
    {
        $config = Config::fromArray(['PGHOST' => '/run/postgresql', 'PGUSER' => 'me', 'PGDATABASE' => 'd', 'PGPASSWORD' => 'pw']);
        self::assertSame(['host' => '/run/postgresql', 'dbname' => 'd', 'options' => '-c TimeZone=UTC', 'application_name' => 'bidbench-php'], $config->libpq);
        self::assertSame('me', $config->dbUser);
        self::assertSame('pw', $config->dbPassword);
        self::assertSame('postgresql://me:***@/run/postgresql/d', $config->dbDisplay);
    }

    /** @return iterable<string, array{array<string, string>}> */
    public static function badEnvironments(): iterable
    {
        yield 'port' => [['PORT' => 'http']];
        yield 'port zero' => [['PORT' => '0']];
        yield 'children' => [['PHP_FPM_CHILDREN' => '0']];
        yield 'jit' => [['PHP_JIT' => 'yes']];
        yield 'log level' => [['LOG_LEVEL' => 'verbose']];
        yield 'server timing' => [['SERVER_TIMING' => 'true']];
        yield 'unsorted' => [['BIDBENCH_UNFAIR_UNSORTED' => 'yes']];
        yield 'per field' => [['BIDBENCH_UNFAIR_PER_FIELD' => 'true']];
        yield 'per field two' => [['BIDBENCH_UNFAIR_PER_FIELD' => '2']];
        yield 'url scheme' => [['DATABASE_URL' => 'mysql://x@y/z']];
    }

    /**
     * @dataProvider badEnvironments
     * @param array<string, string> $env
     */
    public function testBadValuesAreRefused(array $env): void
    {
        $this->expectException(ConfigError::class);
        Config::fromArray($env);
    }
}
