<?php

declare(strict_types=1);

namespace Bidbench;

use Bidbench\Handler\BidHandler;
use Bidbench\Handler\CategoryHandler;
use Bidbench\Handler\HealthHandler;
use Bidbench\Handler\ItemHandler;
use Bidbench\Handler\RegionHandler;
use Bidbench\Handler\UserHandler;
use Bidbench\Http\Request;
use Bidbench\Http\Response;

/**
 * One request, in the contract's request handling order (contract/README.md): body size, route,
 * method, path id, query, content type, body, database work. The first failure answers.
 */
final class App
{
    public function __construct(
        private readonly Config $config,
        private readonly Logger $log,
        private readonly Db $db,
    ) {
    }

    /**
     * The front controller's entry: build the request's objects from the environment, handle, write.
     *
     * @param array<string, mixed> $server $_SERVER
     */
    public static function serve(array $server, int $startNanos): void
    {
        try {
            $config = Config::fromProcessEnvironment();
        } catch (ConfigError $e) {
            // bin/fpm-exec.php refuses to start FPM with a bad environment; this is only a safety net.
            (new Logger(LogLevel::Error, 'php://stderr'))->error('configuration: ' . $e->getMessage());
            (new Response(500, Json::encode(ApiError::internal()->body())))->send(new ServerTiming(false, $startNanos));
            return;
        }
        $log = new Logger($config->logLevel, $config->logFile);
        $timing = new ServerTiming($config->serverTiming, $startNanos);
        $request = Request::fromServer($server);
        $input = fopen('php://input', 'rb');
        $queuedAt = is_numeric($server['BIDBENCH_QUEUED_AT'] ?? null) ? (float) $server['BIDBENCH_QUEUED_AT'] : null;
        $db = new Db($config, $log, $timing, $queuedAt);
        $response = (new self($config, $log, $db))->handle($request, $input === false ? null : $input);
        $response->send($timing);
        if ($log->debugEnabled()) {
            $log->debug(sprintf('%s %s %d %.3F ms', $request->method, $request->path, $response->status, $timing->elapsedMillis()));
        }
    }

    /** @param resource|null $input the request body stream */
    public function handle(Request $request, $input): Response
    {
        try {
            return $this->dispatch($request, $input);
        } catch (ApiError $e) {
            if ($e->errorCode === ErrorCode::DbUnavailable) {
                $this->log->warn('503 database unavailable: ' . $request->method . ' ' . $request->path);
            }
            return Response::json($e->errorCode->status(), $e->body(), $e->headers);
        } catch (\Throwable $e) {
            // A bug by definition (the conformance suite fails on any 500): log it whole, answer the contract's 500.
            $this->log->error(sprintf(
                '500 on %s %s: %s: %s at %s:%d',
                $request->method,
                $request->path,
                $e::class,
                $e->getMessage(),
                $e->getFile(),
                $e->getLine(),
            ));
            return Response::json(500, ApiError::internal()->body());
        }
    }

    /** @param resource|null $input */
    private function dispatch(Request $request, $input): Response
    {
        // 1. Body size, before routing (nginx enforces the same limit first).
        $body = $input === null ? '' : Validation::readBody($input, $request->contentLength);
        // 2. Route. 3. Method.
        $route = Router::match($request->path) ?? throw ApiError::routeNotFound();
        $endpoint = $route->methods[$request->method] ?? throw ApiError::methodNotAllowed($route->allowed());
        // 4. Path id.
        $id = $route->rawId === null ? 0 : Validation::pathId($route->rawId);
        // 5. Query (the list routes only; every other route ignores it).
        [$limit, $offset] = $endpoint->isPaged() ? Validation::paging($request->query) : [0, 0];
        // 6. Content type and 7. body (POST and PUT only).
        $fields = [];
        $schema = $endpoint->bodySchema();
        if ($schema !== null) {
            Validation::contentType($request->contentType);
            $fields = Validation::body($body, $schema);
        }
        // 8. Database work.
        return match ($endpoint) {
            Endpoint::Health => (new HealthHandler($this->db))->health(),
            Endpoint::Ready => (new HealthHandler($this->db))->ready(),
            Endpoint::ListRegions => (new RegionHandler($this->db))->list(),
            Endpoint::ListCategories => (new CategoryHandler($this->db))->list(),
            Endpoint::ListCategoryItems => (new CategoryHandler($this->db))->items($id, $limit, $offset),
            Endpoint::CreateItem => (new ItemHandler($this->db))->create($fields),
            Endpoint::GetItem => (new ItemHandler($this->db, $this->config->unfairPerField))->get($id),
            Endpoint::UpdateItem => (new ItemHandler($this->db))->update($id, $fields),
            Endpoint::DeleteItem => (new ItemHandler($this->db))->delete($id),
            Endpoint::ListItemBids => (new BidHandler($this->db))->list($id, $limit, $offset),
            Endpoint::PlaceBid => (new BidHandler($this->db))->place($id, $fields),
            Endpoint::CreateUser => (new UserHandler($this->db))->create($fields),
            Endpoint::GetUser => (new UserHandler($this->db))->get($id),
        };
    }
}
