<?php

declare(strict_types=1);

namespace Bidbench\Tests\Unit;

use Bidbench\ApiError;
use Bidbench\Endpoint;
use Bidbench\Field;
use Bidbench\Validation;
use PHPUnit\Framework\TestCase;

final class ValidationTest extends TestCase
{
    /** @param array<string, Field> $schema */
    private static function bodyError(string $body, array $schema): ?string
    {
        try {
            Validation::body($body, $schema);
            return null;
        } catch (ApiError $e) {
            self::assertSame(400, $e->errorCode->status());
            return $e->getMessage();
        }
    }

    private static function createItem(): array
    {
        return Endpoint::CreateItem->bodySchema() ?? [];
    }

    /** @return iterable<string, array{string, ?string}> */
    public static function hostileBodies(): iterable
    {
        $valid = '{"seller_id":1,"category_id":2,"title":"t","description":"","initial_price_cents":100,"duration_seconds":60}';
        yield 'valid' => [$valid, null];
        yield 'invalid UTF-8' => ["{\"title\":\"\xC3\x28\"}", 'request body is not valid UTF-8'];
        yield 'overlong UTF-8' => ["{\"title\":\"\xC0\xAF\"}", 'request body is not valid UTF-8'];
        yield 'UTF-8 encoded surrogate' => ["{\"title\":\"\xED\xA0\x80\"}", 'request body is not valid UTF-8'];
        yield 'truncated UTF-8' => ["{\"title\":\"\xE2\x82\"}", 'request body is not valid UTF-8'];
        yield 'BOM' => ["\xEF\xBB\xBF" . $valid, 'request body is not valid JSON'];
        yield 'empty' => ['', 'request body is not valid JSON'];
        yield 'whitespace only' => [" \n", 'request body is not valid JSON'];
        yield 'malformed' => ['{"seller_id":', 'request body is not valid JSON'];
        yield 'trailing comma' => ['{"seller_id":1,}', 'request body is not valid JSON'];
        yield 'trailing garbage' => [$valid . 'x', 'request body is not valid JSON'];
        yield 'two values' => [$valid . $valid, 'request body is not valid JSON'];
        yield 'single quotes' => ["{'seller_id':1}", 'request body is not valid JSON'];
        yield 'NaN' => ['{"seller_id":NaN}', 'request body is not valid JSON'];
        yield 'leading zero' => ['{"seller_id":01}', 'request body is not valid JSON'];
        yield 'raw control character' => ["{\"title\":\"a\x01\"}", 'request body is not valid JSON'];
        yield 'lone high surrogate' => ['{"title":"\ud800"}', 'request body is not valid JSON'];
        yield 'lone low surrogate' => ['{"title":"\udc00"}', 'request body is not valid JSON'];
        yield 'high surrogate then letter' => ['{"title":"\ud800\u0041"}', 'request body is not valid JSON'];
        yield 'lone surrogate in a key' => ['{"\ud800":1}', 'request body is not valid JSON'];
        yield 'trailing whitespace is fine' => [$valid . " \r\n\t", null];
        yield 'array' => ['[]', 'request body must be a JSON object'];
        yield 'array with whitespace' => [' [1]', 'request body must be a JSON object'];
        yield 'string' => ['"x"', 'request body must be a JSON object'];
        yield 'number' => ['5', 'request body must be a JSON object'];
        yield 'null' => ['null', 'request body must be a JSON object'];
        yield 'unknown field' => [substr($valid, 0, -1) . ',"x":1}', 'request body has unknown fields'];
        yield 'unknown NUL key' => ['{"\u0000a":1}', 'request body has unknown fields'];
        yield 'unknown numeric key' => ['{"1":1}', 'request body has unknown fields'];
        yield 'unknown empty key' => ['{"":1}', 'request body has unknown fields'];
        yield 'unknown before missing' => ['{"x":1}', 'request body has unknown fields'];
        yield 'empty object' => ['{}', 'missing field: seller_id'];
        yield 'missing in order' => ['{"seller_id":1,"title":"t"}', 'missing field: category_id'];
        yield 'null is invalid, not missing' => ['{"seller_id":null}', 'invalid field: seller_id'];
        yield 'invalid before later missing' => ['{"seller_id":"1"}', 'invalid field: seller_id'];
        yield 'duplicate key, last wins (valid)' => ['{"seller_id":"x",' . substr($valid, 1), null];
        yield 'duplicate key, last wins (invalid)' => [substr($valid, 0, -1) . ',"seller_id":0}', 'invalid field: seller_id'];
        yield 'NUL in title' => [str_replace('"t"', '"a\u0000b"', $valid), 'invalid field: title'];
        yield 'empty title' => [str_replace('"t"', '""', $valid), 'invalid field: title'];
        yield 'huge number' => [str_replace('"seller_id":1', '"seller_id":1e400', $valid), 'invalid field: seller_id'];
        yield 'huge negative' => [str_replace('"seller_id":1', '"seller_id":-1e400', $valid), 'invalid field: seller_id'];
        yield 'beyond int64' => [str_replace('"seller_id":1', '"seller_id":9223372036854775808', $valid), 'invalid field: seller_id'];
        yield 'fraction' => [str_replace('"seller_id":1', '"seller_id":1.5', $valid), 'invalid field: seller_id'];
        yield 'integral float' => [str_replace('"seller_id":1', '"seller_id":1.0', $valid), null];
        yield 'exponent' => [str_replace('"seller_id":1', '"seller_id":1e0', $valid), null];
        yield 'boolean' => [str_replace('"seller_id":1', '"seller_id":true', $valid), 'invalid field: seller_id'];
        yield 'object value' => [str_replace('"seller_id":1', '"seller_id":{}', $valid), 'invalid field: seller_id'];
        yield 'negative cents' => [str_replace('"initial_price_cents":100', '"initial_price_cents":-100', $valid), 'invalid field: initial_price_cents'];
        yield 'short duration' => [str_replace('"duration_seconds":60', '"duration_seconds":59', $valid), 'invalid field: duration_seconds'];
    }

    /** @dataProvider hostileBodies */
    public function testBodyRulesInContractOrder(string $body, ?string $expected): void
    {
        self::assertSame($expected, self::bodyError($body, self::createItem()));
    }

    public function testNestingDeeperThan32ContainersIsInvalidJson(): void
    {
        $schema = self::createItem();
        // The outer object is the first container: 1 + 31 arrays = 32 is allowed (then an unknown field).
        $allowed = '{"x":' . str_repeat('[', 31) . str_repeat(']', 31) . '}';
        self::assertSame('request body has unknown fields', self::bodyError($allowed, $schema));
        $tooDeep = '{"x":' . str_repeat('[', 32) . str_repeat(']', 32) . '}';
        self::assertSame('request body is not valid JSON', self::bodyError($tooDeep, $schema));
        // Objects count the same as arrays; a deep value inside a known field is invalid, not too deep.
        $objects = str_repeat('{"a":', 32) . '1' . str_repeat('}', 32);
        self::assertSame('request body has unknown fields', self::bodyError($objects, $schema));
        self::assertSame('request body is not valid JSON', self::bodyError(str_repeat('{"a":', 33) . '1' . str_repeat('}', 33), $schema));
        self::assertSame('request body must be a JSON object', self::bodyError(str_repeat('[', 32) . str_repeat(']', 32), $schema));
        self::assertSame('request body is not valid JSON', self::bodyError(str_repeat('[', 33) . str_repeat(']', 33), $schema));
    }

    public function testValidBodyGivesTypedValues(): void
    {
        $fields = Validation::body('{"bidder_id":7.0,"amount_cents":100000000000}', Endpoint::PlaceBid->bodySchema() ?? []);
        self::assertSame(['bidder_id' => 7, 'amount_cents' => 100000000000], $fields);
    }

    /** @return iterable<string, array{Field, mixed, int|string|null}> */
    public static function fieldCases(): iterable
    {
        yield 'id min' => [Field::Id, 1, 1];
        yield 'id zero' => [Field::Id, 0, null];
        yield 'id max' => [Field::Id, 2147483647, 2147483647];
        yield 'id over' => [Field::Id, 2147483648, null];
        yield 'id float max' => [Field::Id, 2147483647.0, 2147483647];
        yield 'id string' => [Field::Id, '5', null];
        yield 'id bool' => [Field::Id, true, null];
        yield 'id null' => [Field::Id, null, null];
        yield 'id INF' => [Field::Id, INF, null];
        yield 'id NAN' => [Field::Id, NAN, null];
        yield 'cents max' => [Field::Cents, 100000000000, 100000000000];
        yield 'cents max as float' => [Field::Cents, 1e11, 100000000000];
        yield 'cents over' => [Field::Cents, 100000000001, null];
        yield 'cents fraction' => [Field::Cents, 10.5, null];
        yield 'duration min' => [Field::Duration, 60, 60];
        yield 'duration max' => [Field::Duration, 2592000, 2592000];
        yield 'duration over' => [Field::Duration, 2592001, null];
        yield 'title 200 astral code points' => [Field::Title, str_repeat("\u{1F600}", 200), str_repeat("\u{1F600}", 200)];
        yield 'title 201 code points' => [Field::Title, str_repeat('é', 201), null];
        yield 'title 200 ascii' => [Field::Title, str_repeat('a', 200), str_repeat('a', 200)];
        yield 'title empty' => [Field::Title, '', null];
        yield 'title NUL' => [Field::Title, "a\0", null];
        yield 'title number' => [Field::Title, 5, null];
        yield 'description empty' => [Field::Description, '', ''];
        yield 'description 10000 two-byte' => [Field::Description, str_repeat('é', 10000), str_repeat('é', 10000)];
        yield 'description 10001' => [Field::Description, str_repeat('a', 10001), null];
        yield 'nickname' => [Field::Nickname, 'A_z09', 'A_z09'];
        yield 'nickname short' => [Field::Nickname, 'ab', null];
        yield 'nickname 32' => [Field::Nickname, str_repeat('a', 32), str_repeat('a', 32)];
        yield 'nickname 33' => [Field::Nickname, str_repeat('a', 33), null];
        yield 'nickname trailing newline' => [Field::Nickname, "abc\n", null];
        yield 'nickname dash' => [Field::Nickname, 'ab-c', null];
        yield 'nickname non-ASCII letter' => [Field::Nickname, 'abé', null];
    }

    /** @dataProvider fieldCases */
    public function testFieldRules(Field $field, mixed $value, int|string|null $expected): void
    {
        self::assertSame($expected, $field->accept($value));
    }

    /** @return iterable<string, array{string, ?string}> */
    public static function pathIds(): iterable
    {
        yield 'one' => ['1', null];
        yield 'max' => ['2147483647', null];
        yield 'leading zeros' => ['0000000007', null];
        yield 'zero' => ['0', 'invalid path parameter: id'];
        yield 'over max' => ['2147483648', 'invalid path parameter: id'];
        yield 'eleven digits' => ['00000000001', 'invalid path parameter: id'];
        yield 'negative' => ['-1', 'invalid path parameter: id'];
        yield 'plus' => ['+1', 'invalid path parameter: id'];
        yield 'letters' => ['abc', 'invalid path parameter: id'];
        yield 'percent-encoded digit' => ['%31', 'invalid path parameter: id'];
        yield 'space' => ['1 ', 'invalid path parameter: id'];
        yield 'float' => ['1.0', 'invalid path parameter: id'];
        yield 'exponent' => ['1e3', 'invalid path parameter: id'];
    }

    /** @dataProvider pathIds */
    public function testPathId(string $raw, ?string $expected): void
    {
        try {
            self::assertSame((int) $raw, Validation::pathId($raw));
            self::assertNull($expected);
        } catch (ApiError $e) {
            self::assertSame($expected, $e->getMessage());
        }
    }

    /** @return iterable<string, array{string, array{int, int}|string}> */
    public static function queries(): iterable
    {
        yield 'defaults' => ['', [20, 0]];
        yield 'both' => ['limit=5&offset=10', [5, 10]];
        yield 'edges' => ['limit=100&offset=10000', [100, 10000]];
        yield 'leading zeros' => ['limit=000000005', [5, 0]];
        yield 'others ignored' => ['foo=bar&limit=3&x', [3, 0]];
        yield 'empty parts' => ['&&limit=3&', [3, 0]];
        yield 'value with second =' => ['limit=3=4', 'invalid query parameter: limit'];
        yield 'limit zero' => ['limit=0', 'invalid query parameter: limit'];
        yield 'limit over' => ['limit=101', 'invalid query parameter: limit'];
        yield 'limit negative' => ['limit=-1', 'invalid query parameter: limit'];
        yield 'limit empty' => ['limit=', 'invalid query parameter: limit'];
        yield 'limit without =' => ['limit', 'invalid query parameter: limit'];
        yield 'limit ten digits' => ['limit=0000000001', 'invalid query parameter: limit'];
        yield 'limit huge' => ['limit=99999999999999999999', 'invalid query parameter: limit'];
        yield 'limit percent-encoded' => ['limit=%31', 'invalid query parameter: limit'];
        yield 'limit plus' => ['limit=+1', 'invalid query parameter: limit'];
        yield 'limit duplicate, both valid' => ['limit=1&limit=1', 'invalid query parameter: limit'];
        yield 'name not decoded' => ['%6Cimit=1000', [20, 0]];
        yield 'offset negative' => ['offset=-1', 'invalid query parameter: offset'];
        yield 'offset over' => ['offset=10001', 'invalid query parameter: offset'];
        yield 'offset duplicate' => ['offset=1&offset=2', 'invalid query parameter: offset'];
        yield 'limit checked first' => ['offset=x&limit=x', 'invalid query parameter: limit'];
        yield 'case matters' => ['LIMIT=1000', [20, 0]];
    }

    /**
     * @dataProvider queries
     * @param array{int, int}|string $expected
     */
    public function testPaging(string $query, array|string $expected): void
    {
        try {
            self::assertSame($expected, Validation::paging($query));
        } catch (ApiError $e) {
            self::assertSame($expected, $e->getMessage());
        }
    }

    /** @return iterable<string, array{?string, bool}> */
    public static function contentTypes(): iterable
    {
        yield 'exact' => ['application/json', true];
        yield 'charset' => ['application/json; charset=utf-8', true];
        yield 'upper case' => ['APPLICATION/JSON', true];
        yield 'spaces' => ['  application/json  ;x=y', true];
        yield 'missing' => [null, false];
        yield 'empty' => ['', false];
        yield 'text' => ['text/plain', false];
        yield 'form' => ['application/x-www-form-urlencoded', false];
        yield 'suffix' => ['application/json-patch+json', false];
        yield 'problem json' => ['application/problem+json', false];
    }

    /** @dataProvider contentTypes */
    public function testContentType(?string $header, bool $ok): void
    {
        try {
            Validation::contentType($header);
            self::assertTrue($ok);
        } catch (ApiError $e) {
            self::assertFalse($ok);
            self::assertSame(415, $e->errorCode->status());
            self::assertSame('content type must be application/json', $e->getMessage());
        }
    }

    /** @return resource */
    private static function stream(string $content)
    {
        $stream = fopen('php://memory', 'w+b');
        self::assertIsResource($stream);
        fwrite($stream, $content);
        rewind($stream);
        return $stream;
    }

    public function testBodyLimit(): void
    {
        self::assertSame(65536, strlen(Validation::readBody(self::stream(str_repeat('a', 65536)), '65536')));
        self::assertSame(65536, strlen(Validation::readBody(self::stream(str_repeat('a', 65536)), null)));
        self::assertSame('', Validation::readBody(self::stream(''), null));
        foreach ([[str_repeat('a', 65537), null], ['', '65537'], ['', '99999999999999999999'], [str_repeat('a', 65537), '10']] as [$content, $declared]) {
            try {
                Validation::readBody(self::stream($content), $declared);
                self::fail('no 413 for ' . strlen($content) . ' bytes declared as ' . var_export($declared, true));
            } catch (ApiError $e) {
                self::assertSame(413, $e->errorCode->status());
                self::assertSame('request body exceeds 65536 bytes', $e->getMessage());
            }
        }
    }
}
