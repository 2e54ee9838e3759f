<?php

declare(strict_types=1);

/*
 * Start-up of the PHP-FPM half of an instance: check the environment, write the start-up line, then
 * become php-fpm (same process id, same standard output).
 *
 *   php -c <run_dir>/php.ini bin/fpm-exec.php <run_dir>/instance.json <php-fpm binary> [php-fpm arguments...]
 *
 * PHP has no long-lived application process that could print the contract's start-up line, so this
 * script does, with the app's own Config class and the instance's own php.ini (so the OPcache and JIT
 * values are the ones FPM will run with). instance.json holds what the harness rendered into the
 * nginx and FPM configuration. A bad environment value stops the instance here, before any request.
 */

require __DIR__ . '/../autoload.php';

use Bidbench\Config;
use Bidbench\ConfigError;
use Bidbench\Logger;

if ($argc < 3) {
    fwrite(STDERR, "usage: php bin/fpm-exec.php <instance.json> <php-fpm> [args...]\n");
    exit(2);
}
[, $instanceFile, $fpm] = $argv;
$fpmArgs = array_slice($argv, 3);

try {
    $config = Config::fromProcessEnvironment();
} catch (ConfigError $e) {
    fwrite(STDERR, 'bidbench-php: bad configuration: ' . $e->getMessage() . "\n");
    exit(2);
}

$instance = json_decode((string) file_get_contents($instanceFile), true, 8, JSON_THROW_ON_ERROR);
$jit = (string) ini_get('opcache.jit');
$fields = $config->startupFields([
    'php_version' => PHP_VERSION,
    'opcache' => filter_var(ini_get('opcache.enable'), FILTER_VALIDATE_BOOL),
    'opcache_validate_timestamps' => filter_var(ini_get('opcache.validate_timestamps'), FILTER_VALIDATE_BOOL),
    'opcache_preload' => ini_get('opcache.preload') !== '',
    'opcache_jit' => $jit === '' || $jit === '0' ? 'off' : $jit,
    'opcache_jit_buffer_size' => (string) ini_get('opcache.jit_buffer_size'),
    ...$instance,
]);

$log = new Logger($config->logLevel, $config->logFile);
$warnings = [];
if ($config->unfairUnsorted) {
    $warnings[] = '!!! BIDBENCH_UNFAIR_UNSORTED=1: list queries run WITHOUT their ORDER BY. This is the deliberately '
        . 'unequal RUBiS variant; its numbers are not a fair comparison. !!!';
}
if ($config->unfairPerField) {
    $warnings[] = '!!! BIDBENCH_UNFAIR_PER_FIELD=1: GET /items/{id} reads each field with its own SELECT. This is the '
        . 'deliberately unequal RUBiS variant; its numbers are not a fair comparison. !!!';
}
if ($config->dbPoolSize !== $config->fpmChildren) {
    $warnings[] = "DB_POOL_SIZE={$config->dbPoolSize} has no effect in PHP: the instance holds one persistent "
        . "connection per FPM child, PHP_FPM_CHILDREN={$config->fpmChildren} connections";
}
foreach ($warnings as $warning) {
    $log->warn($warning);
    fwrite(STDOUT, 'WARN ' . $warning . "\n");
}
fwrite(STDOUT, 'bidbench-start ' . json_encode($fields, JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR) . "\n");
fflush(STDOUT);

pcntl_exec($fpm, $fpmArgs);
fwrite(STDERR, "bidbench-php: could not execute {$fpm}\n");
exit(1);
