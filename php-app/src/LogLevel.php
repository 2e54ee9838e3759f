<?php

declare(strict_types=1);

namespace Bidbench;

/** LOG_LEVEL of the contract. Higher value = more verbose, so "enabled" is one integer comparison. */
enum LogLevel: int
{
    case Error = 0;
    case Warn = 1;
    case Info = 2;
    case Debug = 3;

    public static function fromName(string $name): self
    {
        return match ($name) {
            'error' => self::Error,
            'warn' => self::Warn,
            'info' => self::Info,
            'debug' => self::Debug,
            default => throw new ConfigError("LOG_LEVEL must be error, warn, info or debug, not '{$name}'"),
        };
    }

    public function label(): string
    {
        return strtolower($this->name);
    }
}
