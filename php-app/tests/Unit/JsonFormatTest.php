<?php

declare(strict_types=1);

namespace Bidbench\Tests\Unit;

use Bidbench\ApiError;
use Bidbench\Format;
use Bidbench\Http\Response;
use Bidbench\Json;
use Bidbench\ServerTiming;
use Bidbench\Tests\Contract;
use PHPUnit\Framework\TestCase;

final class JsonFormatTest extends TestCase
{
    /** @return iterable<string, array{string, string}> */
    public static function timestamps(): iterable
    {
        yield 'three digits' => ['2026-11-21 14:21:00.123+00', '2026-11-21T14:21:00.123Z'];
        yield 'two digits' => ['2026-11-21 14:21:00.12+00', '2026-11-21T14:21:00.120Z'];
        yield 'one digit' => ['2026-11-21 14:21:00.1+00', '2026-11-21T14:21:00.100Z'];
        yield 'no fraction' => ['2026-11-21 14:21:00+00', '2026-11-21T14:21:00.000Z'];
        yield 'midnight' => ['2036-01-01 00:00:00+00', '2036-01-01T00:00:00.000Z'];
        yield 'other offset converted' => ['2026-11-21 16:21:00.5+02', '2026-11-21T14:21:00.500Z'];
        yield 'negative offset across a day' => ['2026-12-31 23:30:00.007-05', '2027-01-01T04:30:00.007Z'];
        yield 'half-hour offset' => ['2026-11-21 19:51:00.123+05:30', '2026-11-21T14:21:00.123Z'];
    }

    /** @dataProvider timestamps */
    public function testTimestamp(string $pg, string $expected): void
    {
        self::assertSame($expected, Json::timestamp($pg));
    }

    public function testEncodeIsCompactWithoutTrailingNewline(): void
    {
        self::assertSame(
            '{"a":[1,2],"b":"é/😀\"","c":true,"d":100000000000}',
            Json::encode(['a' => [1, 2], 'b' => "é/\u{1F600}\"", 'c' => true, 'd' => 100000000000]),
        );
        self::assertSame('{"items":[],"limit":20,"offset":0}', Json::encode(['items' => [], 'limit' => 20, 'offset' => 0]));
    }

    /** @return array<string, mixed> */
    private static function itemRow(): array
    {
        return [
            'id' => 7, 'category_id' => 2, 'seller_id' => 3, 'nickname' => 'user3', 'title' => 'T', 'description' => 'D',
            'initial_price_cents' => 100, 'max_bid_cents' => 0, 'bid_count' => 0,
            'start_time' => '2025-01-01 00:00:00+00', 'end_time' => '2036-01-01 00:00:00.5+00',
        ];
    }

    /** @return array<string, mixed> */
    private static function bidRow(): array
    {
        return ['id' => 1, 'item_id' => 7, 'bidder_id' => 4, 'amount_cents' => 150, 'created_at' => '2025-01-01 00:00:01.25+00'];
    }

    public function testFieldOrderFollowsOpenapi(): void
    {
        $user = ['id' => 1, 'nickname' => 'n', 'region_id' => 2, 'rating' => 0, 'created_at' => '2025-01-01 00:00:00+00'];
        $cases = [
            'ItemSummary' => Format::itemSummary(self::itemRow()),
            'ItemRecord' => Format::itemRecord(self::itemRow()),
            'ItemDetail' => Format::itemDetail(self::itemRow(), []),
            'Bid' => Format::bid(self::bidRow()),
            'User' => Format::user($user),
            'Region' => Format::named(['id' => 1, 'name' => 'x']),
            'Category' => Format::named(['id' => 1, 'name' => 'x']),
        ];
        foreach ($cases as $schema => $object) {
            $expected = Contract::properties($schema);
            self::assertNotEmpty($expected, $schema);
            self::assertSame($expected, array_keys($object), $schema);
        }
        self::assertSame(['error'], Contract::properties('Error'));
        self::assertSame(['items', 'limit', 'offset'], Contract::properties('ItemPage'));
        self::assertSame(['bids', 'limit', 'offset'], Contract::properties('BidPage'));
        self::assertSame(['id', 'deleted'], Contract::properties('Deleted'));
    }

    public function testItemDetailBytes(): void
    {
        $detail = Format::itemDetail(self::itemRow(), [Format::bid(self::bidRow())]);
        self::assertSame(
            '{"id":7,"category_id":2,"seller_id":3,"seller_nickname":"user3","title":"T","description":"D",'
            . '"initial_price_cents":100,"max_bid_cents":0,"bid_count":0,"start_time":"2025-01-01T00:00:00.000Z",'
            . '"end_time":"2036-01-01T00:00:00.500Z","top_bids":[{"id":1,"item_id":7,"bidder_id":4,'
            . '"amount_cents":150,"created_at":"2025-01-01T00:00:01.250Z"}]}',
            Json::encode($detail),
        );
    }

    /** @return iterable<string, array{ApiError, int, string}> */
    public static function errors(): iterable
    {
        yield '413' => [ApiError::payloadTooLarge(), 413, '{"error":{"code":"payload_too_large","message":"request body exceeds 65536 bytes"}}'];
        yield '404 route' => [ApiError::routeNotFound(), 404, '{"error":{"code":"not_found","message":"route not found"}}'];
        yield '405' => [ApiError::methodNotAllowed(['GET', 'PUT', 'DELETE']), 405, '{"error":{"code":"method_not_allowed","message":"method not allowed"}}'];
        yield '400' => [ApiError::badRequest('invalid path parameter: id'), 400, '{"error":{"code":"bad_request","message":"invalid path parameter: id"}}'];
        yield '415' => [ApiError::unsupportedMediaType(), 415, '{"error":{"code":"unsupported_media_type","message":"content type must be application/json"}}'];
        yield '404 item' => [ApiError::notFound('item'), 404, '{"error":{"code":"not_found","message":"item not found"}}'];
        yield '404 seller or category' => [ApiError::notFound('seller or category'), 404, '{"error":{"code":"not_found","message":"seller or category not found"}}'];
        yield '409 bid' => [ApiError::conflict('bid must be at least 101 cents'), 409, '{"error":{"code":"conflict","message":"bid must be at least 101 cents"}}'];
        yield '503' => [ApiError::dbUnavailable(), 503, '{"error":{"code":"db_unavailable","message":"database unavailable"}}'];
        yield '500' => [ApiError::internal(), 500, '{"error":{"code":"internal_error","message":"internal error"}}'];
    }

    /** @dataProvider errors */
    public function testErrorBodies(ApiError $error, int $status, string $body): void
    {
        self::assertSame($status, $error->errorCode->status());
        self::assertSame($body, Json::encode($error->body()));
    }

    public function testAllowHeader(): void
    {
        self::assertSame(['Allow' => 'GET, PUT, DELETE'], ApiError::methodNotAllowed(['GET', 'PUT', 'DELETE'])->headers);
    }

    public function testServerTimingFormat(): void
    {
        $timing = new ServerTiming(true, hrtime(true));
        $timing->addDb(1_234_567);
        self::assertMatchesRegularExpression('/^db;dur=1\.235, app;dur=[0-9]+\.[0-9]{3}$/', $timing->header());
        self::assertSame('{"status":"ok"}', Response::json(200, ['status' => 'ok'])->body);
    }
}
