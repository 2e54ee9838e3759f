<?php

declare(strict_types=1);

namespace Bidbench;

use PDO;
use PDOException;
use PDOStatement;

/**
 * The database side of a request: a persistent PDO connection and the statements of Sql.
 *
 * Connections. PHP-FPM has no in-process pool; each FPM child is one OS process serving one request at
 * a time, and PDO::ATTR_PERSISTENT keeps one libpq connection per child alive across requests. So an
 * instance holds exactly PHP_FPM_CHILDREN connections (php-app/README.md, "Connections"). Taking the
 * connection at the start of a request is PHP's pool checkout: PDO checks the kept connection without a
 * round trip (libpq's status of the connection) and reconnects one it already knows to be broken. A
 * connection the server closed while it sat idle (a database restart) is only noticed by the request's
 * first statement: it is dropped, connected again once and the statement sent again; after that, 503.
 *
 * Statements. Every statement is a real server-side statement with bound parameters (no emulation, no
 * values in SQL text), sent as one extended-protocol round trip (PQexecParams: Parse/Bind/Execute into
 * the unnamed statement). PHP cannot keep a named prepared statement across requests through PDO: a
 * PDOStatement lives for one request and DEALLOCATEs its statement when it goes, so "prepare once per
 * child" would cost PREPARE + EXECUTE + DEALLOCATE, three round trips and two extra statements per
 * query. The pgsql extension could keep named statements, but its pg_pconnect() sends "RESET ALL" on
 * every reuse: an extra statement per request. Both would break "the same database work" (docs/design.md §3.2),
 * so the one-round-trip unnamed statement is the lean, equal choice; README.md discusses it.
 * Within a request, statements are cached by name.
 */
final class Db
{
    private const PDO_STATUS_OK = 'Connection OK; waiting to send.';

    /**
     * The contract's pool checkout timeout (rule 8). In PHP a connection belongs to an FPM child, so
     * waiting for a connection is waiting in the FPM backlog for a free child: a request that waited
     * longer than this before a child took it is answered 503 when it first needs the database, as a
     * pool checkout timeout is in Java and Node (found by `./bidbench faults slow-db`).
     */
    public const CHECKOUT_TIMEOUT_S = 5.0;

    /** libpq counts `connect_timeout` in whole seconds and takes any value under 2 as 2. */
    private const MIN_CONNECT_TIMEOUT_S = 2;

    private ?PDO $pdo = null;

    /** @var array<string, PDOStatement> this request's statements, by name */
    private array $statements = [];

    /** Whether a statement has succeeded on the current connection in this request (then it is not stale). */
    private bool $used = false;

    /**
     * Our own record of BEGIN..COMMIT/ROLLBACK. (PDO::inTransaction() asks libpq, which calls a dead
     * connection's state "unknown", and PDO reports that as "in a transaction".)
     */
    private bool $inTransaction = false;

    private readonly bool $timed;

    /**
     * @param float|null $queuedAt when nginx handed the request to FPM (unix seconds, fastcgi_param
     *                             BIDBENCH_QUEUED_AT); null when unknown (no bound on the backlog wait)
     */
    public function __construct(
        private readonly Config $config,
        private readonly Logger $log,
        private readonly ServerTiming $timing,
        private readonly ?float $queuedAt = null,
    ) {
        $this->timed = $timing->enabled || $log->debugEnabled();
    }

    /**
     * @param array<int, int|string> $params by placeholder number: [1 => ..., 2 => ...]
     * @return list<array<string, mixed>>
     */
    public function all(Sql $sql, array $params = []): array
    {
        return $this->run($sql, $params, static fn (PDOStatement $s): array => $s->fetchAll());
    }

    /**
     * The first row, or null.
     *
     * @param array<int, int|string> $params
     * @return array<string, mixed>|null
     */
    public function one(Sql $sql, array $params = []): ?array
    {
        return $this->run($sql, $params, static function (PDOStatement $s): ?array {
            $row = $s->fetch();
            return $row === false ? null : $row;
        });
    }

    /** BEGIN (READ COMMITTED, the server's default), as queries.sql's bid transaction starts. */
    public function begin(): void
    {
        $this->command('BEGIN', static fn (PDO $pdo): bool => $pdo->beginTransaction());
        $this->inTransaction = true;
    }

    public function commit(): void
    {
        $this->inTransaction = false;
        $this->command('COMMIT', static fn (PDO $pdo): bool => $pdo->commit());
    }

    /** ROLLBACK if a transaction is open. Never throws: it runs on paths that already have an answer. */
    public function rollBack(): void
    {
        if (!$this->inTransaction) {
            return;
        }
        $this->inTransaction = false;
        if ($this->pdo === null) {
            return;
        }
        try {
            $this->command('ROLLBACK', static fn (PDO $pdo): bool => $pdo->rollBack());
        } catch (\Throwable $e) {
            // The connection is gone or broken; PDO rolls back a persistent handle's open transaction at request end anyway.
            $this->log->warn('rollback failed: ' . $e->getMessage());
        }
    }

    /** The SQLSTATE of a failed statement, e.g. 23503 (foreign key) or 23505 (unique). */
    public static function sqlState(PDOException $e): string
    {
        return (string) ($e->errorInfo[0] ?? $e->getCode());
    }

    /**
     * @template T
     * @param array<int, int|string> $params
     * @param \Closure(PDOStatement): T $fetch
     * @return T
     */
    private function run(Sql $sql, array $params, \Closure $fetch): mixed
    {
        $started = $this->timed ? hrtime(true) : 0;
        try {
            try {
                $result = $this->execute($sql, $params, $fetch);
            } catch (PDOException $e) {
                if (!$this->isConnectionFailure($e)) {
                    throw $e;
                }
                // A persistent connection that went stale between requests (the server restarted or
                // dropped it) fails on the request's first statement, which therefore never ran: send it
                // once more on a fresh connection. Later in a request, or inside a transaction, the
                // statement's fate is unknown, so the answer is 503.
                if ($this->used || $this->inTransaction) {
                    $this->drop('lost during ' . $sql->value, $e);
                    throw ApiError::dbUnavailable();
                }
                $this->drop('stale on ' . $sql->value . ', reconnecting once', $e);
                try {
                    $result = $this->execute($sql, $params, $fetch);
                } catch (PDOException $again) {
                    if ($this->isConnectionFailure($again)) {
                        $this->drop('lost again during ' . $sql->value, $again);
                        throw ApiError::dbUnavailable();
                    }
                    throw $again;
                }
            }
            $this->used = true;
            return $result;
        } finally {
            if ($this->timed) {
                $this->finished($sql->value, $started);
            }
        }
    }

    /**
     * @param array<int, int|string> $params
     * @param \Closure(PDOStatement): mixed $fetch
     */
    private function execute(Sql $sql, array $params, \Closure $fetch): mixed
    {
        $statement = $this->statements[$sql->value] ??= $this->connection()->prepare(
            $this->pdoText($sql),
            [PDO::PGSQL_ATTR_DISABLE_PREPARES => true],
        );
        $named = [];
        foreach ($params as $number => $value) {
            $named['p' . $number] = $value;
        }
        $statement->execute($named);
        try {
            return $fetch($statement);
        } finally {
            $statement->closeCursor();
        }
    }

    /**
     * The statement text for PDO: `$n` becomes the named placeholder `:pn`, which PDO binds by name and
     * sends to the server as `$1`, `$2`, ... in textual order. (PDO leaves a literal `$n` unbound: it
     * would silently send NULL.) `::` casts are not placeholders to PDO.
     */
    private function pdoText(Sql $sql): string
    {
        return self::namedPlaceholders($this->config->unfairUnsorted && $sql->isList() ? $sql->unsortedText() : $sql->text());
    }

    public static function namedPlaceholders(string $sql): string
    {
        return (string) preg_replace('/\$(\d+)/', ':p$1', $sql);
    }

    /** @param \Closure(PDO): bool $run */
    private function command(string $name, \Closure $run): void
    {
        $started = $this->timed ? hrtime(true) : 0;
        try {
            try {
                $run($this->connection());
            } catch (PDOException $e) {
                if (!$this->isConnectionFailure($e)) {
                    throw $e;
                }
                // BEGIN as the request's first statement has changed nothing: it may go again on a fresh connection.
                if ($name !== 'BEGIN' || $this->used || $this->inTransaction) {
                    $this->drop('lost during ' . $name, $e);
                    throw ApiError::dbUnavailable();
                }
                $this->drop('stale on BEGIN, reconnecting once', $e);
                try {
                    $run($this->connection());
                } catch (PDOException $again) {
                    $this->drop('lost again during BEGIN', $again);
                    throw $this->isConnectionFailure($again) ? ApiError::dbUnavailable() : $again;
                }
            }
            $this->used = true;
        } finally {
            if ($this->timed) {
                $this->finished($name, $started);
            }
        }
    }

    private function connection(): PDO
    {
        if ($this->pdo !== null) {
            return $this->pdo;
        }
        if ($this->queuedAt !== null && microtime(true) - $this->queuedAt > self::CHECKOUT_TIMEOUT_S) {
            $this->log->warn(sprintf(
                'database unavailable: waited %.1F s for a free FPM child (its connection), more than the %.0F s checkout timeout',
                microtime(true) - $this->queuedAt,
                self::CHECKOUT_TIMEOUT_S,
            ));
            throw ApiError::dbUnavailable();
        }
        // The checkout's 5 s count from the request's arrival, as in Java and Node: the backlog wait and
        // every connection attempt share them, so a server that accepts and never answers is a 503 after
        // one timeout, not two.
        $since = $this->queuedAt ?? microtime(true);
        try {
            $this->pdo = $this->connect($this->checkoutLeft($since));
        } catch (PDOException $first) {
            // Taking a persistent connection reconnects a dead one already; a failure here is the server
            // refusing or not answering. Once more while the checkout has time for an attempt, then 503.
            $left = $this->checkoutLeft($since);
            if ($left < self::MIN_CONNECT_TIMEOUT_S) {
                $this->log->error('database unavailable: ' . $first->getMessage());
                throw ApiError::dbUnavailable();
            }
            $this->log->warn('database connection failed, retrying once: ' . $first->getMessage());
            try {
                $this->pdo = $this->connect($left);
            } catch (PDOException $second) {
                $this->log->error('database unavailable: ' . $second->getMessage());
                throw ApiError::dbUnavailable();
            }
        }
        return $this->pdo;
    }

    private function checkoutLeft(float $since): float
    {
        return self::CHECKOUT_TIMEOUT_S - (microtime(true) - $since);
    }

    private function connect(float $timeoutS): PDO
    {
        return new PDO($this->config->pdoDsn(), $this->config->dbUser, $this->config->dbPassword, [
            PDO::ATTR_PERSISTENT => true,
            PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
            PDO::ATTR_EMULATE_PREPARES => false,
            PDO::ATTR_STRINGIFY_FETCHES => false,
            PDO::ATTR_DEFAULT_FETCH_MODE => PDO::FETCH_ASSOC,
            PDO::ATTR_TIMEOUT => self::connectTimeout($timeoutS),
        ]);
    }

    /**
     * libpq's `connect_timeout` for an attempt with this much of the checkout left: rounded up, because
     * libpq's deadline is whole wall-clock seconds and the attempt ends within the second before it.
     */
    public static function connectTimeout(float $leftS): int
    {
        return max(self::MIN_CONNECT_TIMEOUT_S, (int) ceil($leftS));
    }

    /**
     * Connection-level failures (SQLSTATE class 08, the server shutting down) become 503. libpq reports a
     * socket that died under a statement without any SQLSTATE, so the connection's own status decides too.
     */
    private function isConnectionFailure(PDOException $e): bool
    {
        $state = self::sqlState($e);
        if (str_starts_with($state, '08') || in_array($state, ['57P01', '57P02', '57P03'], true)) {
            return true;
        }
        try {
            return $this->pdo === null || $this->pdo->getAttribute(PDO::ATTR_CONNECTION_STATUS) !== self::PDO_STATUS_OK;
        } catch (PDOException) {
            return true;
        }
    }

    /** Forget the connection and this request's statements; the next connect() replaces the persistent handle. */
    private function drop(string $why, PDOException $e): void
    {
        $this->log->warn('database connection ' . $why . ': ' . $e->getMessage());
        $this->statements = [];
        $this->pdo = null;
        $this->used = false;
    }

    private function finished(string $name, int $started): void
    {
        $nanos = hrtime(true) - $started;
        if ($this->timing->enabled) {
            $this->timing->addDb($nanos);
        }
        if ($this->log->debugEnabled()) {
            $this->log->debug(sprintf('sql %s %.3F ms', $name, $nanos / 1e6));
        }
    }
}
