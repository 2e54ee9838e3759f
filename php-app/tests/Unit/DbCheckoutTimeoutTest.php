<?php

declare(strict_types=1);

namespace Bidbench\Tests\Unit;

use Bidbench\ApiError;
use Bidbench\Config;
use Bidbench\Db;
use Bidbench\ErrorCode;
use Bidbench\Logger;
use Bidbench\LogLevel;
use Bidbench\ServerTiming;
use Bidbench\Sql;
use PHPUnit\Framework\TestCase;

/**
 * PHP's pool checkout is the wait in the FPM backlog for a free child (its connection). Like the pool
 * checkout timeout of Java and Node (contract rule 8), a request that waited more than 5 s there is
 * answered 503 when it first needs the database, without touching the database. Found by
 * `./bidbench faults slow-db`: with 100 ms per database reply, requests waited 8 s and more for a child.
 */
final class DbCheckoutTimeoutTest extends TestCase
{
    private string $logFile;

    protected function setUp(): void
    {
        $this->logFile = (string) tempnam(sys_get_temp_dir(), 'bidbench-db-log-');
    }

    protected function tearDown(): void
    {
        @unlink($this->logFile);
    }

    /** By default port 1 on loopback: nothing listens, so any connection attempt is refused at once. */
    private function db(?float $queuedAt, int $port = 1): Db
    {
        $config = Config::fromArray(['DATABASE_URL' => "postgresql://bidbench:x@127.0.0.1:{$port}/bidbench"]);
        $log = new Logger(LogLevel::Info, $this->logFile);
        return new Db($config, $log, new ServerTiming(true, hrtime(true)), $queuedAt);
    }

    private function unavailable(Db $db): ApiError
    {
        try {
            $db->all(Sql::ListCategories);
        } catch (ApiError $e) {
            self::assertSame(ErrorCode::DbUnavailable, $e->errorCode);
            return $e;
        }
        self::fail('expected 503 database unavailable');
    }

    public function testARequestThatWaitedLongerThanTheCheckoutTimeoutIs503WithoutConnecting(): void
    {
        $this->unavailable($this->db(microtime(true) - Db::CHECKOUT_TIMEOUT_S - 1.0));
        $log = (string) file_get_contents($this->logFile);
        self::assertStringContainsString('waited', $log);
        self::assertStringNotContainsString('connection failed', $log);
    }

    public function testARequestWithinTheTimeoutTriesTheDatabase(): void
    {
        $this->unavailable($this->db(microtime(true) - 1.0));
        $log = (string) file_get_contents($this->logFile);
        self::assertStringContainsString('connection failed', $log);
        self::assertStringNotContainsString('waited', $log);
    }

    public function testASilentDatabaseIs503AfterOneConnectTimeoutNotTwo(): void
    {
        // Accepts connections (the kernel completes the handshake) and never answers: the attempt runs
        // until libpq's connect_timeout, and the checkout has no time left for a second one.
        $silent = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
        self::assertNotFalse($silent, $error);
        $address = (string) stream_socket_get_name($silent, false);
        $port = (int) substr($address, (int) strrpos($address, ':') + 1);
        try {
            $started = microtime(true);
            $this->unavailable($this->db(microtime(true), $port));
            $took = microtime(true) - $started;
        } finally {
            fclose($silent);
        }
        $log = (string) file_get_contents($this->logFile);
        self::assertStringNotContainsString('retrying', $log);
        self::assertStringContainsString('database unavailable', $log);
        // libpq may give up up to a second early (its deadline is in whole seconds), never later than due.
        self::assertGreaterThan(Db::CHECKOUT_TIMEOUT_S - 1.1, $took);
    }

    public function testAnAttemptGetsWhatIsLeftOfTheCheckoutInWholeSecondsAtLeastLibpqsTwo(): void
    {
        self::assertSame(5, Db::connectTimeout(Db::CHECKOUT_TIMEOUT_S));
        self::assertSame(5, Db::connectTimeout(4.01));
        self::assertSame(3, Db::connectTimeout(2.5));
        self::assertSame(2, Db::connectTimeout(0.3));
        self::assertSame(2, Db::connectTimeout(-1.0));
    }

    public function testWithoutAQueueTimeThereIsNoBound(): void
    {
        $this->unavailable($this->db(null));
        self::assertStringNotContainsString('waited', (string) file_get_contents($this->logFile));
    }
}
