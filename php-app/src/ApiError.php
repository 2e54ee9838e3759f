<?php

declare(strict_types=1);

namespace Bidbench;

/**
 * An answer from the contract's error table. Thrown anywhere in request handling, turned into the
 * one error body shape by App. The named constructors hold every message text, so no handler spells one.
 */
final class ApiError extends \RuntimeException
{
    /** @param array<string, string> $headers extra response headers (Allow on a 405) */
    public function __construct(
        public readonly ErrorCode $errorCode,
        string $message,
        public readonly array $headers = [],
    ) {
        parent::__construct($message);
    }

    public static function payloadTooLarge(): self
    {
        return new self(ErrorCode::PayloadTooLarge, 'request body exceeds ' . Validation::BODY_LIMIT . ' bytes');
    }

    public static function routeNotFound(): self
    {
        return new self(ErrorCode::NotFound, 'route not found');
    }

    /** @param list<string> $allowed */
    public static function methodNotAllowed(array $allowed): self
    {
        return new self(ErrorCode::MethodNotAllowed, 'method not allowed', ['Allow' => implode(', ', $allowed)]);
    }

    public static function badRequest(string $message): self
    {
        return new self(ErrorCode::BadRequest, $message);
    }

    public static function unsupportedMediaType(): self
    {
        return new self(ErrorCode::UnsupportedMediaType, 'content type must be application/json');
    }

    public static function notFound(string $what): self
    {
        return new self(ErrorCode::NotFound, $what . ' not found');
    }

    public static function conflict(string $message): self
    {
        return new self(ErrorCode::Conflict, $message);
    }

    public static function dbUnavailable(): self
    {
        return new self(ErrorCode::DbUnavailable, 'database unavailable');
    }

    public static function internal(): self
    {
        return new self(ErrorCode::InternalError, 'internal error');
    }

    /** @return array{error: array{code: string, message: string}} */
    public function body(): array
    {
        return ['error' => ['code' => $this->errorCode->value, 'message' => $this->getMessage()]];
    }
}
