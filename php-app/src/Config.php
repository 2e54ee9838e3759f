<?php

declare(strict_types=1);

namespace Bidbench;

/**
 * The effective configuration, read from the environment variables of contract/README.md.
 *
 * PHP-FPM has no long-lived application object, so every request builds this again from getenv()
 * (a dozen hash lookups). bin/fpm-exec.php builds it once at start-up with the same code, prints the
 * start-up line and refuses to start on a bad value, so a request never meets an invalid environment.
 */
final class Config
{
    /** The variables this class reads; everything else in the environment is ignored. */
    public const VARIABLES = [
        'HOST', 'PORT', 'DATABASE_URL', 'PGHOST', 'PGPORT', 'PGUSER', 'PGPASSWORD', 'PGDATABASE',
        'DB_POOL_SIZE', 'PHP_FPM_CHILDREN', 'PHP_JIT', 'LOG_LEVEL', 'SERVER_TIMING',
        'BIDBENCH_UNFAIR_UNSORTED', 'BIDBENCH_UNFAIR_PER_FIELD', 'BIDBENCH_PHP_LOG',
    ];

    /**
     * @param array<string, string> $libpq connection parameters for libpq (host, port, dbname, extra URL query parameters)
     */
    public function __construct(
        public readonly string $host,
        public readonly int $port,
        public readonly array $libpq,
        public readonly ?string $dbUser,
        public readonly ?string $dbPassword,
        public readonly string $dbDisplay,
        public readonly int $dbPoolSize,
        public readonly int $fpmChildren,
        public readonly bool $jit,
        public readonly LogLevel $logLevel,
        public readonly bool $serverTiming,
        public readonly bool $unfairUnsorted,
        public readonly bool $unfairPerField,
        public readonly string $logFile,
    ) {
    }

    public static function fromProcessEnvironment(): self
    {
        $env = [];
        foreach (self::VARIABLES as $name) {
            // local_only: read the process environment, never a FastCGI parameter of the same name.
            $value = getenv($name, true);
            if ($value !== false) {
                $env[$name] = $value;
            }
        }
        return self::fromArray($env);
    }

    /** @param array<string, string> $env */
    public static function fromArray(array $env): self
    {
        [$libpq, $user, $password, $display] = self::database($env);
        return new self(
            host: self::nonEmpty($env, 'HOST') ?? '127.0.0.1',
            port: self::int($env, 'PORT', 8080, 1, 65535),
            libpq: $libpq,
            dbUser: $user,
            dbPassword: $password,
            dbDisplay: $display,
            dbPoolSize: self::int($env, 'DB_POOL_SIZE', 10, 1, 10000),
            fpmChildren: self::int($env, 'PHP_FPM_CHILDREN', 10, 1, 10000),
            jit: self::flag($env, 'PHP_JIT', false),
            logLevel: LogLevel::fromName(self::nonEmpty($env, 'LOG_LEVEL') ?? 'info'),
            serverTiming: self::flag($env, 'SERVER_TIMING', true),
            unfairUnsorted: self::flag($env, 'BIDBENCH_UNFAIR_UNSORTED', false),
            unfairPerField: self::flag($env, 'BIDBENCH_UNFAIR_PER_FIELD', false),
            logFile: self::nonEmpty($env, 'BIDBENCH_PHP_LOG') ?? 'php://stderr',
        );
    }

    /** The PDO data source name. Values are quoted for libpq; PDO turns every ';' into a space. */
    public function pdoDsn(): string
    {
        $parts = [];
        foreach ($this->libpq as $key => $value) {
            $parts[] = $key . "='" . str_replace(['\\', "'"], ['\\\\', "\\'"], $value) . "'";
        }
        return 'pgsql:' . implode(';', $parts);
    }

    /**
     * The JSON object of the start-up line (contract/README.md, "Start-up line"). The password is never in it.
     *
     * @param array<string, mixed> $runtime what only the running PHP knows: version, OPcache and JIT settings
     * @return array<string, mixed>
     */
    public function startupFields(array $runtime): array
    {
        return [
            'impl' => 'php',
            'host' => $this->host,
            'port' => $this->port,
            'db' => $this->dbDisplay,
            'db_pool_size' => $this->dbPoolSize,
            'log_level' => $this->logLevel->label(),
            'server_timing' => $this->serverTiming,
            'php_fpm_children' => $this->fpmChildren,
            'php_jit' => $this->jit,
            // One persistent connection per FPM child: this, not DB_POOL_SIZE, is the instance's connection count.
            'db_connections' => $this->fpmChildren,
            'unfair_unsorted' => $this->unfairUnsorted,
            'unfair_per_field' => $this->unfairPerField,
            ...$runtime,
        ];
    }

    /**
     * @param array<string, string> $env
     * @return array{0: array<string, string>, 1: ?string, 2: ?string, 3: string}
     */
    private static function database(array $env): array
    {
        $url = self::nonEmpty($env, 'DATABASE_URL');
        if ($url === null) {
            // The standard libpq variables; what is unset stays unset, so libpq applies its own defaults.
            $libpq = array_filter([
                'host' => self::nonEmpty($env, 'PGHOST'),
                'port' => self::nonEmpty($env, 'PGPORT'),
                'dbname' => self::nonEmpty($env, 'PGDATABASE'),
            ], static fn (?string $v): bool => $v !== null);
            $user = self::nonEmpty($env, 'PGUSER');
            $password = $env['PGPASSWORD'] ?? null;
        } else {
            $parts = parse_url($url);
            if ($parts === false || !in_array($parts['scheme'] ?? '', ['postgresql', 'postgres'], true)) {
                throw new ConfigError('DATABASE_URL must look like postgresql://user:password@host:port/dbname');
            }
            $libpq = array_filter([
                'host' => isset($parts['host']) ? rawurldecode($parts['host']) : null,
                'port' => isset($parts['port']) ? (string) $parts['port'] : null,
                'dbname' => isset($parts['path']) && $parts['path'] !== '/' ? rawurldecode(substr($parts['path'], 1)) : null,
            ], static fn (?string $v): bool => $v !== null);
            parse_str($parts['query'] ?? '', $query);
            foreach ($query as $key => $value) {
                if (is_string($value)) {
                    $libpq[(string) $key] = $value; // e.g. sslmode, connect_timeout
                }
            }
            $user = isset($parts['user']) ? rawurldecode($parts['user']) : null;
            $password = isset($parts['pass']) ? rawurldecode($parts['pass']) : null;
        }
        // Every session runs in UTC (timestamps are formatted from the text PostgreSQL sends), set in the
        // start-up packet so that it costs no statement and survives PQreset of a persistent connection.
        $libpq['options'] = '-c TimeZone=UTC';
        $libpq['application_name'] = 'bidbench-php';

        $display = 'postgresql://'
            . ($user !== null ? rawurlencode($user) . ($password !== null ? ':***' : '') . '@' : '')
            . ($libpq['host'] ?? '') . (isset($libpq['port']) ? ':' . $libpq['port'] : '')
            . '/' . ($libpq['dbname'] ?? '');
        return [$libpq, $user, $password, $display];
    }

    /** @param array<string, string> $env */
    private static function nonEmpty(array $env, string $name): ?string
    {
        $value = $env[$name] ?? '';
        return $value === '' ? null : $value;
    }

    /** @param array<string, string> $env */
    private static function int(array $env, string $name, int $default, int $min, int $max): int
    {
        $raw = self::nonEmpty($env, $name);
        if ($raw === null) {
            return $default;
        }
        if (preg_match('/^[0-9]{1,9}\z/', $raw) !== 1 || (int) $raw < $min || (int) $raw > $max) {
            throw new ConfigError("{$name} must be an integer from {$min} to {$max}, not '{$raw}'");
        }
        return (int) $raw;
    }

    /** @param array<string, string> $env */
    private static function flag(array $env, string $name, bool $default): bool
    {
        return match (self::nonEmpty($env, $name)) {
            null => $default,
            '1' => true,
            '0' => false,
            default => throw new ConfigError("{$name} must be 0 or 1, not '{$env[$name]}'"),
        };
    }
}
